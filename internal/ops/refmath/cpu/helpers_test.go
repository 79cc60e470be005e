package cpu

import "os"

// host is this CPU's kernel set, for the kernels' tests and benchmarks,
// cut down to $ET_CPU_KERNELS where that is set (Kernels.Limit: avx2 on
// an AVX-512 machine runs what an AVX2 one runs).
var host = func() *Kernels {
	ks, err := Detect().Limit(os.Getenv("ET_CPU_KERNELS"))
	if err != nil {
		panic(err)
	}
	return &ks
}()

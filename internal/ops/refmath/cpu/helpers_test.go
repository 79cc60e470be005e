package cpu

import (
	"os"
	"testing"
)

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

// TestHostKernelSet: the tests and benchmarks run the set $ET_CPU_KERNELS
// names. Reading the variable here, inside a test, also keys go test's
// cache on it: host's initializer reads it before the cache's log starts,
// so ET_CPU_KERNELS=avx2 go test would otherwise be answered from a run
// without it.
func TestHostKernelSet(t *testing.T) {
	name := os.Getenv("ET_CPU_KERNELS")
	want, err := Detect().Limit(name)
	if err != nil {
		t.Fatal(err)
	}
	if *host != want {
		t.Fatalf("ET_CPU_KERNELS=%q: tests run %+v, want %+v", name, *host, want)
	}
}

package runner

import "github.com/ainekko/et/internal/ops/refmath"

// UseCPUKernels makes the reference math of this process run the kernel
// set called name (cpu.Kernels.Limit: native; avx512 or avx2 on amd64,
// dotprod or neon on arm64; portable), to run on this machine what a
// smaller one runs; "" keeps the detected set.
// A set the CPU lacks or an unknown name is an error and changes nothing.
func UseCPUKernels(name string) error {
	if name == "" {
		return nil
	}
	ks, err := refmath.Host().Limit(name)
	if err != nil {
		return err
	}
	refmath.UseHost(refmath.Kernels{Kernels: ks})
	return nil
}

package main

import (
	"fmt"

	"github.com/ainekko/et/internal/ops/refmath"
)

// cpuKernelsEnv names the kernel set the reference math runs with
// (docs/performance.md): native (the default), avx512, avx2 or portable,
// to run on this machine what a smaller one runs.
const cpuKernelsEnv = "ET_CPU_KERNELS"

// useCPUKernels applies $ET_CPU_KERNELS, if set, to the reference math of
// this process (refmath.UseHost); a set the CPU lacks or an unknown name
// is a usage error.
func useCPUKernels(getenv func(string) string) error {
	name := getenv(cpuKernelsEnv)
	if name == "" {
		return nil
	}
	ks, err := refmath.Host().Limit(name)
	if err != nil {
		return &usageError{fmt.Errorf("%s: %w", cpuKernelsEnv, err)}
	}
	refmath.UseHost(refmath.Kernels{Kernels: ks})
	return nil
}

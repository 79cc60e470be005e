package main

import (
	"fmt"

	"github.com/ainekko/et/internal/runner"
)

// cpuKernelsEnv names the kernel set the reference math runs with
// (docs/performance.md): native (the default), avx512 or avx2 (amd64),
// dotprod or neon (arm64), portable, to run on this machine what a
// smaller one runs.
const cpuKernelsEnv = "ET_CPU_KERNELS"

// useCPUKernels applies $ET_CPU_KERNELS, if set (runner.UseCPUKernels); a
// set the CPU lacks or an unknown name is a usage error.
func useCPUKernels(getenv func(string) string) error {
	if err := runner.UseCPUKernels(getenv(cpuKernelsEnv)); err != nil {
		return &usageError{fmt.Errorf("%s: %w", cpuKernelsEnv, err)}
	}
	return nil
}

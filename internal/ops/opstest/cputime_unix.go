//go:build unix

package opstest

import (
	"syscall"
)

// ProcessCPUNS is the CPU time (user + system) this process has used, in
// nanoseconds, or -1 if unknown. Benchmarks report it per op, because
// wall-clock time on a shared machine measures the neighbours too.
func ProcessCPUNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

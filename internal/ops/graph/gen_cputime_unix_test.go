//go:build unix

package graph

import "syscall"

// processCPUNS is the process's user+system CPU time, in ns (-1 if
// unknown): steadier than wall time on a shared machine.
func processCPUNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

//go:build !unix

package opstest

// ProcessCPUNS is -1: unknown off unix.
func ProcessCPUNS() int64 { return -1 }

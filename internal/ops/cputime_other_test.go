//go:build !unix

package ops

func processCPUNS() int64 { return -1 }

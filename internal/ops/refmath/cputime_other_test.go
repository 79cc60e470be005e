//go:build !unix

package refmath

func processCPUNS() int64 { return -1 }

//go:build !unix

package graph

func processCPUNS() int64 { return -1 }

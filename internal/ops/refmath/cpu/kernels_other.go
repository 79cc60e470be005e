//go:build !amd64

package cpu

// detectAsm and detectVec set nothing: the assembly and the vector
// kernels are amd64's.
func detectAsm(*Kernels) {}

func detectVec(*Kernels) {}

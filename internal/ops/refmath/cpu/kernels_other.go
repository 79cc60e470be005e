//go:build !amd64 && !arm64

package cpu

// archKernelSets: only native and portable here.
var archKernelSets []string

// detectAsm and detectVec set nothing: the assembly and the vector
// kernels are amd64's and arm64's.
func detectAsm(*Kernels) {}

func detectVec(*Kernels) {}

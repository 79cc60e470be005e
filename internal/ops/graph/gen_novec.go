//go:build !amd64

package graph

// normalKernels lists the scalar code alone.
func normalKernels() []int { return []int{0} }

// fillNormalVec writes nothing: off amd64 there are no vector kernels.
func fillNormalVec(pairs int, mean, std float64, z uint64, dst []float32) int { return 0 }

// clearUpper does nothing in this build.
func clearUpper() {}

//go:build !(goexperiment.simd && amd64)

package graph

// vecNormal is false: this build has no vector kernels.
const vecNormal = false

// fillNormalVec writes nothing: this build has no vector kernels.
func fillNormalVec(mean, std float64, z uint64, dst []float32) int { return 0 }

// clearUpper does nothing in this build.
func clearUpper() {}

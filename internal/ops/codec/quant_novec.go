//go:build !(goexperiment.simd && amd64)

package codec

// quantKernels lists the scalar code alone: this build has no vector
// quantizers.
func quantKernels() []int { return []int{0} }

func quantQ8_0Vec(lanes int, src []float32, dst []byte) bool { return false }

func quantQ4_0Vec(lanes int, src []float32, dst []byte) bool { return false }

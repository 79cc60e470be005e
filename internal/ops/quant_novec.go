//go:build !(goexperiment.simd && amd64)

package ops

// VecQuant is false: this build has no vector quantizers.
const vecQuant = false

// quantLanes is 0: the scalar quantizers.
var quantLanes = 0

// quantKernels lists the scalar code alone.
func quantKernels() []int { return []int{0} }

func quantQ8_0Vec(src []float32, dst []byte) bool { return false }

func quantQ4_0Vec(src []float32, dst []byte) bool { return false }

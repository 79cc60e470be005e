//go:build !(goexperiment.simd && amd64)

package ops

// Without GOEXPERIMENT=simd on amd64, soft_max runs its scalar loops.

func softMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	return 0, false
}

func scaleRowVec(w []float32, s float32) bool { return false }

// sumF64 is the sequential float64 sum of w.
func sumF64(w []float32) float64 {
	var s float64
	for _, v := range w {
		s += float64(v)
	}
	return s
}

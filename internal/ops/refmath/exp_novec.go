//go:build !(goexperiment.simd && amd64)

package refmath

// expShiftRow does nothing in this build: the caller runs the scalar loop.
func (ks *Kernels) expShiftRow(w []float32, m float32) bool { return false }

//go:build !(goexperiment.simd && amd64)

package cpu

// ExpShiftRow does nothing in this build: the caller runs the scalar loop.
func (ks *Kernels) ExpShiftRow(w []float32, m float32) bool { return false }

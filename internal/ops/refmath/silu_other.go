//go:build !amd64

package refmath

// Without the amd64 kernels, silu and swiglu run the scalar code.

func (ks *Kernels) siluRow(dst, x []float32) { siluRowScalar(dst, x) }

func (ks *Kernels) swigluRow(dst, a, b []float32) { swigluRowScalar(dst, a, b) }

func (ks *Kernels) softMaxExpVec(w []float32, m float32) float64 { return softMaxExpScalar(w, m) }

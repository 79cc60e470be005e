//go:build !amd64

package cpu

// Without the amd64 kernels, silu and swiglu run the scalar code.

func (ks *Kernels) SiluRow(dst, x []float32) { siluRowScalar(dst, x) }

func (ks *Kernels) SwigluRow(dst, a, b []float32) { swigluRowScalar(dst, a, b) }

func (ks *Kernels) SoftMaxExpVec(w []float32, m float32) float64 { return softMaxExpScalar(w, m) }

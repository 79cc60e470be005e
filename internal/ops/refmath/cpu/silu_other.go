//go:build !amd64

package cpu

// Without the amd64 kernels, silu and swiglu run the scalar code.

// SiluRow is dst = silu(x) by ggml's split of a row (siluGGML on the
// vector part, SiluF32 after).
func (ks *Kernels) SiluRow(dst, x []float32) { siluRowScalar(dst, x) }

// SwigluRow is dst = silu(a)·b by ggml's split of a row.
func (ks *Kernels) SwigluRow(dst, a, b []float32) { swigluRowScalar(dst, a, b) }

// SoftMaxExpVec sets w[i] = exp(w[i] - m) as ggml's soft_max does and
// returns Σ w[i] in float64.
func (ks *Kernels) SoftMaxExpVec(w []float32, m float32) float64 { return softMaxExpScalar(w, m) }

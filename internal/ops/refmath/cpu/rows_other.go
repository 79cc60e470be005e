//go:build !amd64

package cpu

// Without the amd64 kernels, silu and swiglu, f32 -> f16 rows and
// soft_max's passes run the scalar code.

// SiluRow is dst = silu(x) by ggml's split of a row (siluGGML on the
// vector part, SiluF32 after).
func (ks *Kernels) SiluRow(dst, x []float32) { siluRowScalar(dst, x) }

// SwigluRow is dst = silu(a)·b by ggml's split of a row.
func (ks *Kernels) SwigluRow(dst, a, b []float32) { swigluRowScalar(dst, a, b) }

// SoftMaxExpVec sets w[i] = exp(w[i] - m) as ggml's soft_max does and
// returns Σ w[i] in float64.
func (ks *Kernels) SoftMaxExpVec(w []float32, m float32) float64 { return softMaxExpScalar(w, m) }

// F32ToF16Row is dst = F32ToF16(src), by F16C or AVX-512 where the CPU has
// them.
func (ks *Kernels) F32ToF16Row(dst []uint16, src []float32) { f32ToF16RowScalar(dst, src) }

// F32ToF16Whole is the amd64 build's F16C row conversion: never here.
func (ks *Kernels) F32ToF16Whole(*uint16, *float32, int) bool { return false }

// SoftMaxPrepVec is w[i] = x[i]·scale (+ slope·mrow[i]), returning max_i
// w[i]; false, having done nothing, without a kernel.
func (ks *Kernels) SoftMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	return 0, false
}

// ScaleRowVec sets w[i] *= s; false, having done nothing, without a
// kernel.
func (ks *Kernels) ScaleRowVec(w []float32, s float32) bool { return false }

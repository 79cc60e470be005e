//go:build !goexperiment.simd

package cpu

// F32ToF16Row converts by F16C where the CPU has it, as the
// GOEXPERIMENT=simd build does (rowvec_simd_amd64.go), without that
// build's integer vector code for CPUs without F16C.
func (ks *Kernels) F32ToF16Row(dst []uint16, src []float32) {
	if ks.F16C && len(src) >= 8 {
		ks.f32ToF16RowF16C(dst, src)
		return
	}
	f32ToF16RowScalar(dst, src)
}

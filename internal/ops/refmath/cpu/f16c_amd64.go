package cpu

// The f32 -> f16 row conversions with F16C (f16c_amd64.s) run in every
// amd64 build, GOEXPERIMENT=simd or not.

// f32ToF16F16C converts src[0:n] to halves in dst[0:n] (n a multiple of
// 8) 32 then eight at a time with VCVTPS2PH (imm 0: round to nearest
// even), stopping before the first group of eight that holds a NaN (F16C
// keeps a NaN's payload; F32ToF16 gives sign|0x7e00). It returns how many
// it converted, and clears the upper halves of the vector registers.
//
//go:noescape
func f32ToF16F16C(dst *uint16, src *float32, n int) int

// f32ToF16AVX512 is f32ToF16F16C with AVX-512, 64 values a step and 32 (n a
// multiple of 32), stopping before the first 32 that hold a NaN.
//
//go:noescape
func f32ToF16AVX512(dst *uint16, src *float32, n int) int

// f32ToF16RowF16C is f32ToF16Row with F16C (32 values a step with
// AVX-512, then eight): groups of eight with a NaN, and the tail, go
// through the scalar code.
func (ks *Kernels) f32ToF16RowF16C(dst []uint16, src []float32) {
	n := len(src) &^ 7
	dst = dst[:len(src)]
	for i := 0; i < n; {
		if ks.AVX512 && n-i >= 32 {
			if i += f32ToF16AVX512(&dst[i], &src[i], (n-i)&^31); i == n {
				break
			}
		}
		i += f32ToF16F16C(&dst[i], &src[i], n-i)
		if i < n {
			f32ToF16RowScalar(dst[i:i+8], src[i:i+8])
			i += 8
		}
	}
	f32ToF16RowScalar(dst[n:], src[n:])
}

// F32ToF16Whole converts the n values at src into the halves at dst in
// one call of the assembly (f32ToF16AVX512 for a multiple of 32 values
// with AVX-512, else f32ToF16F16C) and reports whether it did: false
// without F16C, for n not a multiple of 8, or for values with a NaN
// (some may then be converted; f32ToF16Row does them all again).
func (ks *Kernels) F32ToF16Whole(dst *uint16, src *float32, n int) bool {
	switch {
	case !ks.F16C || n&7 != 0:
		return false
	case ks.AVX512 && n&31 == 0:
		return f32ToF16AVX512(dst, src, n) == n
	}
	return f32ToF16F16C(dst, src, n) == n
}

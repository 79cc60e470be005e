package cpu

import (
	"math"
)

// silu and swiglu on f32 rows compute what ggml's CPU backend computes:
// ggml_vec_silu_f32 and ggml_vec_swiglu_f32 run each row's first
// len&^15 values through a float32 vector silu (ggml_v_silu over
// ggml_v_expf, AVX-512 form: 16 lanes) and the rest through the scalar
// x/(1+expf(-x)) with the C library's expf. The vector exp is the Arm
// optimized-routines method ggml adapted, documented by ggml at about
// 1.5 ulp: n = round(x·log2 e) by the 1.5·2^23 shift, b = x − n·ln 2 in
// two fused steps, a degree-5 polynomial in b and b² with fused steps,
// and the scaling j·2^n by VSCALEFPS; |n| > 192 gives +Inf (n > 0) or 0.
// Then 1 + e and the division, each rounded to float32.
//
// expGGML and siluGGML are that method one value at a time, with every
// fused step rounded once (fma32), so the scalar code, the AVX2 lanes and
// the AVX-512 lanes give the same bits (silu_simd_amd64.go); what ggml's
// CPU gives for them is checked bit for bit against outputs of the
// prebuilt ../shared/ggml (TestSiluMatchesGGML, testdata/silu). The
// previous reference, float32(math.Exp) in every position, was about an
// ulp from ggml's results and cost five times ggml's time in float64
// lanes; this one is ggml's own rounding, at ggml's speed.

// The vector exp's constants (hexadecimal float32 values, as ggml writes
// them).
const (
	ExpgShift float32 = 0x1.8p23      // 1.5·2^23: z = x·log2e + shift rounds n into the low bits
	ExpgLog2e float32 = 0x1.715476p+0 // log2(e)
	expgLn2Hi float32 = 0x1.62e4p-1   // ln 2, high part
	expgLn2Lo float32 = 0x1.7f7d1cp-20
	expgC5    float32 = 0x1.0e4020p-7
	expgC4    float32 = 0x1.573e2ep-5
	expgC3    float32 = 0x1.555e66p-3
	expgC2    float32 = 0x1.fffdb6p-2
	expgC1    float32 = 0x1.ffffecp-1
	expgBig   float32 = 192 // |n| above it: overflow to +Inf or underflow to 0
)

// SiluBlock is the width of ggml's vector silu on AVX-512: a row's first
// len&^(siluBlock-1) values take the vector method, the rest the scalar.
const SiluBlock = 16

// Fma32 is a·b + c rounded once to float32 (VFMADD on float32 lanes). The
// product is exact in float64; the float64 sum s may round, and rounding
// s again to float32 then differs from rounding the exact sum only when s
// lands exactly on a tie between two float32s (a tie is a float64, so the
// exact sum lies on the tie's side that s does otherwise): its 29 bits
// below float32's mantissa are then 1000...0. At a tie, or where s is not
// a normal float32, fma32Slow decides by the rounding error's sign.
func Fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	// The biased exponent in [1023-126, 1023+127] (one unsigned compare),
	// and not a tie.
	if bits := math.Float64bits(s); (bits>>52&0x7ff)-(1023-126) < 254 && bits&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	return fma32Slow(a, b, c)
}

// fma32Slow is fma32 by TwoSum: s + e is the exact sum.
func fma32Slow(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	r := float32(s)
	if float64(r) == s || math.IsInf(s, 0) || s != s {
		return r
	}
	bv := s - p
	e := (p - (s - bv)) + (q - bv) // s + e == p + q exactly
	if e == 0 {
		return r
	}
	// The other float32 neighbour of s.
	o := math.Nextafter32(r, float32(math.Inf(1)))
	if float64(r) > s {
		o = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if float64(r)+float64(o) != 2*s {
		return r // not a tie: r is the exact sum's rounding too
	}
	if (e > 0) == (o > r) {
		return o
	}
	return r
}

// expGGML is ggml's float32 vector exp (ggml_v_expf, AVX-512 form) on one
// value.
func expGGML(x float32) float32 {
	z := Fma32(x, ExpgLog2e, ExpgShift)
	n := z - ExpgShift
	b := Fma32(-n, expgLn2Lo, Fma32(-n, expgLn2Hi, x))
	u := b * b
	j := Fma32(Fma32(Fma32(expgC5, b, expgC4), u, Fma32(expgC3, b, expgC2)), u, Fma32(expgC1, b, 1))
	if n > expgBig {
		return float32(math.Inf(1))
	}
	if n < -expgBig {
		return 0
	}
	if n != n {
		return n
	}
	// VSCALEFPS: j·2^n rounded once; the float64 product is exact
	// (|n| <= 192: 2^n is a normal float64).
	return float32(float64(j) * math.Float64frombits(uint64(int64(n)+1023)<<52))
}

// SiluGGML is ggml_v_silu on one value: x / (1 + exp(0 − x)).
func SiluGGML(x float32) float32 { return x / (1 + expGGML(0-x)) }

// siluRowScalar is dst = silu(x) for one row (or a piece of one that
// starts at a multiple of siluBlock), as ggml's CPU computes it.
func siluRowScalar(dst, x []float32) {
	dst = dst[:len(x)]
	n := len(x) &^ (SiluBlock - 1)
	for i, v := range x[:n] {
		dst[i] = SiluGGML(v)
	}
	for i := n; i < len(x); i++ {
		dst[i] = SiluF32(x[i])
	}
}

// swigluRowScalar is dst = silu(a)·b, split as siluRowScalar.
func swigluRowScalar(dst, a, b []float32) {
	b = b[:len(a)]
	dst = dst[:len(a)]
	n := len(a) &^ (SiluBlock - 1)
	for i, v := range a[:n] {
		dst[i] = SiluGGML(v) * b[i]
	}
	for i := n; i < len(a); i++ {
		dst[i] = SiluF32(a[i]) * b[i]
	}
}

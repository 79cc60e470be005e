//go:build goexperiment.simd && amd64

package cpu

import (
	"simd/archsimd"
	"unsafe"
)

// The AVX-512 form of flash_attn_ext's exp (soft_max's until 2026-12-03,
// when it took ggml's own float32 exp, softMaxExpRow): the same operations as the
// one-chain kernel in two chains of eight float64 lanes, so each lane's
// result is its result bit for bit (TestExpShift512). AVX-512 has no VROUNDPD on 512-bit registers;
// VRNDSCALEPD with scale 0 (RoundToEvenScaled(0)) rounds to the nearest
// integer, ties to even, as VROUNDPD with mode 0 does.

type (
	f32x16 = archsimd.Float32x16
	f64x8  = archsimd.Float64x8
)

func at16(p unsafe.Pointer, i int) *[16]float32 { return (*[16]float32)(unsafe.Add(p, 4*i)) }

// expShiftVec2 is expShiftVec (w[i] = exp(w[i] - m) at p, n a multiple of
// 8) with two independent chains of float64x8 lanes, sixteen values a
// step: each lane does expShiftVec's operations in its order (the float32
// difference, clamp, reduction by ln 2 in two unfused parts, degree-13
// unfused Horner, 2^n from the converted integer, the merges for x < -104
// and NaN), so the results are its results bit for bit (TestExpShift512).
// n is a multiple of 16: the caller runs the last eight through
// expShiftVec, so that m, a float32 argument, is not live across the loop
// (the compiler reloads such a value with a legacy-SSE MOVSS each step,
// which with dirty upper halves made the loop six times slower; see
// clearUpper).
func (ks *Kernels) expShiftVec2(p unsafe.Pointer, n int, m float32) {
	f64 := archsimd.BroadcastFloat64x8
	mv := archsimd.BroadcastFloat32x16(m)
	var (
		log2e        = f64(1.44269504088896338700e+00)
		ln2Hi, ln2Lo = f64(6.93147180369123816490e-01), f64(1.90821492927058770002e-10)
		lo, hi       = f64(-110), f64(100)
		cut          = f64(-104)
		one          = f64(1)
		bias         = archsimd.BroadcastInt64x8(1023)
		zero         f64x8
	)
	c := &expC13
	for i := 0; i < n; i += 16 {
		ptr := at16(p, i)
		v := archsimd.LoadFloat32x16(ptr).Sub(mv)
		x0, x1 := v.GetLo().ConvertToFloat64(), v.GetHi().ConvertToFloat64()
		xc0, xc1 := x0.Max(lo).Min(hi), x1.Max(lo).Min(hi)
		k0, k1 := xc0.Mul(log2e).RoundToEvenScaled(0), xc1.Mul(log2e).RoundToEvenScaled(0)
		r0 := xc0.Sub(k0.Mul(ln2Hi)).Sub(k0.Mul(ln2Lo))
		r1 := xc1.Sub(k1.Mul(ln2Hi)).Sub(k1.Mul(ln2Lo))
		q0, q1 := c[13].Mul(r0).Add(c[12]), c[13].Mul(r1).Add(c[12])
		for j := 11; j >= 2; j-- {
			q0, q1 = q0.Mul(r0).Add(c[j]), q1.Mul(r1).Add(c[j])
		}
		q0, q1 = q0.Mul(r0).Add(one).Mul(r0).Add(one), q1.Mul(r1).Add(one).Mul(r1).Add(one)
		e0 := q0.Mul(k0.ConvertToInt64().Add(bias).ShiftAllLeft(52).AsFloat64x8())
		e1 := q1.Mul(k1.ConvertToInt64().Add(bias).ShiftAllLeft(52).AsFloat64x8())
		e0 = x0.Merge(e0.Merge(zero, x0.GreaterEqual(cut)), x0.IsNaN())
		e1 = x1.Merge(e1.Merge(zero, x1.GreaterEqual(cut)), x1.IsNaN())
		var z f32x16
		z.SetLo(e0.ConvertToFloat32()).SetHi(e1.ConvertToFloat32()).Store(ptr)
	}
}

// expC13 are 1/k! for k = 0..13 in float64x8 lanes, expShiftVec's
// coefficients.
var expC13 = func() (c [14]f64x8) {
	if !archsimd.X86.AVX512() { // the CPU cannot even build them
		return c
	}
	f := 1.0
	for k := range c {
		if k > 0 {
			f /= float64(k)
		}
		c[k] = archsimd.BroadcastFloat64x8(f)
	}
	archsimd.ClearAVXUpperBits()
	return c
}()

//go:build goexperiment.simd && amd64

package ops

import (
	"simd/archsimd"
	"unsafe"
)

// The AVX-512 forms of the exp-bound row kernels: the same operations as
// the AVX2 kernels on eight float64 lanes (Float64x8) instead of four, so
// each lane's result is the AVX2 kernel's bit for bit (TestSilu512,
// TestExpShift512). AVX-512 has no VROUNDPD on 512-bit registers;
// VRNDSCALEPD with scale 0 (RoundToEvenScaled(0)) rounds to the nearest
// integer, ties to even, as VROUNDPD with mode 0 does.

type (
	f32x16 = archsimd.Float32x16
	f64x8  = archsimd.Float64x8
)

// vecExp512 reports whether silu and swiglu run on the AVX-512 kernel
// (siluVec512): AVX-512 (F, DQ, VL, BW, CD) besides AVX2 and FMA.
var vecExp512 = vecExp && archsimd.X86.AVX512()

// expConsts8 are expConsts broadcast to eight float64 (sixteen float32)
// lanes.
type expConsts8 struct {
	log2e, negLn2Hi, negLn2Lo, one, magic f64x8
	lo, hi, one32                         f32x16
	c                                     [12]f64x8
}

func newExpConsts8() *expConsts8 {
	if !vecExp512 {
		return nil
	}
	b := archsimd.BroadcastFloat64x8
	e := &expConsts8{
		log2e:    b(1.44269504088896338700e+00),
		negLn2Hi: b(-6.93147180369123816490e-01), negLn2Lo: b(-1.90821492927058770002e-10),
		one:   b(1),
		magic: b(1<<52 + 1023),
		lo:    archsimd.BroadcastFloat32x16(-110), hi: archsimd.BroadcastFloat32x16(100),
		one32: archsimd.BroadcastFloat32x16(1),
	}
	f := 1.0
	for k := range e.c {
		if k > 0 {
			f /= float64(k)
		}
		e.c[k] = b(f)
	}
	archsimd.ClearAVXUpperBits()
	return e
}

var expK8 = newExpConsts8()

func at16(p unsafe.Pointer, i int) *[16]float32 { return (*[16]float32)(unsafe.Add(p, 4*i)) }

// siluVec512 is siluVec (pg nil: silu; else swiglu, times the gate at pg)
// on AVX-512, n a multiple of 8: 32 values a step in four independent
// float64x8 exp chains, each lane doing expF64x4's and siluVec8's
// operations in their order (negate and clamp in float32, reduction by two
// fused steps, degree-11 fused Horner, scaling by 2^n in the exponent
// bits, rounding to float32, 1 + e and the division in float32); then 16
// values a step in two chains, and the last 8 through siluVec8.
func siluVec512(pd, px, pg unsafe.Pointer, n int, k *expConsts8) {
	var zero f32x16
	lo, hi, one32 := k.lo, k.hi, k.one32
	log2e, nHi, nLo, one, magic := k.log2e, k.negLn2Hi, k.negLn2Lo, k.one, k.magic
	c := &k.c
	i := 0
	for ; i+32 <= n; i += 32 {
		x0, x1 := archsimd.LoadFloat32x16(at16(px, i)), archsimd.LoadFloat32x16(at16(px, i+16))
		a := zero.Sub(x0).Max(lo).Min(hi)
		b := zero.Sub(x1).Max(lo).Min(hi)
		a0, a1 := a.GetLo().ConvertToFloat64(), a.GetHi().ConvertToFloat64()
		b0, b1 := b.GetLo().ConvertToFloat64(), b.GetHi().ConvertToFloat64()
		na0, na1 := a0.Mul(log2e).RoundToEvenScaled(0), a1.Mul(log2e).RoundToEvenScaled(0)
		nb0, nb1 := b0.Mul(log2e).RoundToEvenScaled(0), b1.Mul(log2e).RoundToEvenScaled(0)
		ra0, ra1 := na0.MulAdd(nHi, a0), na1.MulAdd(nHi, a1)
		rb0, rb1 := nb0.MulAdd(nHi, b0), nb1.MulAdd(nHi, b1)
		ra0, ra1 = na0.MulAdd(nLo, ra0), na1.MulAdd(nLo, ra1)
		rb0, rb1 = nb0.MulAdd(nLo, rb0), nb1.MulAdd(nLo, rb1)
		qa0, qa1 := c[11].MulAdd(ra0, c[10]), c[11].MulAdd(ra1, c[10])
		qb0, qb1 := c[11].MulAdd(rb0, c[10]), c[11].MulAdd(rb1, c[10])
		for j := 9; j >= 2; j-- {
			qa0, qa1 = qa0.MulAdd(ra0, c[j]), qa1.MulAdd(ra1, c[j])
			qb0, qb1 = qb0.MulAdd(rb0, c[j]), qb1.MulAdd(rb1, c[j])
		}
		qa0, qa1 = qa0.MulAdd(ra0, one).MulAdd(ra0, one), qa1.MulAdd(ra1, one).MulAdd(ra1, one)
		qb0, qb1 = qb0.MulAdd(rb0, one).MulAdd(rb0, one), qb1.MulAdd(rb1, one).MulAdd(rb1, one)
		qa0 = qa0.Mul(na0.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		qa1 = qa1.Mul(na1.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		qb0 = qb0.Mul(nb0.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		qb1 = qb1.Mul(nb1.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		y0 := x0.Div(one32.Add(zero.SetLo(qa0.ConvertToFloat32()).SetHi(qa1.ConvertToFloat32())))
		y1 := x1.Div(one32.Add(zero.SetLo(qb0.ConvertToFloat32()).SetHi(qb1.ConvertToFloat32())))
		if pg != nil {
			y0 = y0.Mul(archsimd.LoadFloat32x16(at16(pg, i)))
			y1 = y1.Mul(archsimd.LoadFloat32x16(at16(pg, i+16)))
		}
		y0.Store(at16(pd, i))
		y1.Store(at16(pd, i+16))
	}
	for ; i+16 <= n; i += 16 {
		x0 := archsimd.LoadFloat32x16(at16(px, i))
		a := zero.Sub(x0).Max(lo).Min(hi)
		a0, a1 := a.GetLo().ConvertToFloat64(), a.GetHi().ConvertToFloat64()
		na0, na1 := a0.Mul(log2e).RoundToEvenScaled(0), a1.Mul(log2e).RoundToEvenScaled(0)
		ra0, ra1 := na0.MulAdd(nHi, a0), na1.MulAdd(nHi, a1)
		ra0, ra1 = na0.MulAdd(nLo, ra0), na1.MulAdd(nLo, ra1)
		qa0, qa1 := c[11].MulAdd(ra0, c[10]), c[11].MulAdd(ra1, c[10])
		for j := 9; j >= 2; j-- {
			qa0, qa1 = qa0.MulAdd(ra0, c[j]), qa1.MulAdd(ra1, c[j])
		}
		qa0, qa1 = qa0.MulAdd(ra0, one).MulAdd(ra0, one), qa1.MulAdd(ra1, one).MulAdd(ra1, one)
		qa0 = qa0.Mul(na0.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		qa1 = qa1.Mul(na1.Add(magic).AsInt64x8().ShiftAllLeft(52).AsFloat64x8())
		y0 := x0.Div(one32.Add(zero.SetLo(qa0.ConvertToFloat32()).SetHi(qa1.ConvertToFloat32())))
		if pg != nil {
			y0 = y0.Mul(archsimd.LoadFloat32x16(at16(pg, i)))
		}
		y0.Store(at16(pd, i))
	}
	if i < n {
		y := siluVec8(archsimd.LoadFloat32x8(at(px, i)), expK)
		if pg != nil {
			y = y.Mul(archsimd.LoadFloat32x8(at(pg, i)))
		}
		y.Store(at(pd, i))
	}
}

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
func expShiftVec2(p unsafe.Pointer, n int, m float32) {
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
	if !vecQuant {
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

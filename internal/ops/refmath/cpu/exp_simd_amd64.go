//go:build goexperiment.simd && amd64

package cpu

import (
	"simd/archsimd"
	"unsafe"
)

// ExpShiftRow sets w[i] = expf32(w[i] - m) for every i, eight lanes at a
// time with AVX-512 (GOEXPERIMENT=simd on CPUs with AVX-512), and reports
// whether it did (false: the caller runs the scalar loop). The lanes
// compute the float32 difference exactly as the scalar code, then exp in
// float64 (reduction by ln 2 in two parts, degree-13 Taylor polynomial,
// scaling by 2^n, error about 2 ulp of float64) rounded once to float32:
// the scalar code's float32(math.Exp(float64(x))) except, for about one
// value in 10^8, one float32 ulp away when the exact value lies within a
// few float64 ulps of a float32 rounding tie (TestExpShiftRowVec). Both
// are within an ulp of glibc's expf.
//
// Without AVX-512, on CPUs with AVX2 and FMA, expShiftVec4 runs the same
// steps in four float64 lanes, with fused multiply-adds in the polynomial
// and the scaling by 2^n built from the integer bits of n + 1.5·2^52 (AVX2
// has no float64-to-int64 conversion); its float64 values may differ from
// the AVX-512 lanes' in the last bits, and its float32 results matched
// expf32 for all of 72M floats in a stride of 61 through [-120, 110].
func (ks *Kernels) ExpShiftRow(w []float32, m float32) bool {
	if len(w) < 8 || !(ks.Vec512 || ks.Exp4) {
		return false
	}
	n := len(w) &^ 7
	if ks.Vec512 {
		n16 := len(w) &^ 15
		ks.expShiftVec2(unsafe.Pointer(&w[0]), n16, m)
		if n16 < n {
			expShiftVec(unsafe.Pointer(&w[n16]), n-n16, m)
		}
	} else {
		expShiftVec4(unsafe.Pointer(&w[0]), n, m)
	}
	archsimd.ClearAVXUpperBits()
	for i := n; i < len(w); i++ {
		w[i] = Expf32(w[i] - m)
	}
	return true
}

func expShiftVec(p unsafe.Pointer, n int, m float32) {
	f64 := archsimd.BroadcastFloat64x8
	mv := archsimd.BroadcastFloat32x8(m)
	var (
		log2e        = f64(1.44269504088896338700e+00)
		ln2Hi, ln2Lo = f64(6.93147180369123816490e-01), f64(1.90821492927058770002e-10)
		lo, hi       = f64(-110), f64(100)
		cut          = f64(-104)
		one          = f64(1)
		bias         = archsimd.BroadcastInt64x8(1023)
		sh52         = archsimd.BroadcastInt64x8(52)
		zero         archsimd.Float64x8
	)
	var c [14]archsimd.Float64x8 // c[k] = 1/k!
	f := 1.0
	for k := range c {
		if k > 0 {
			f /= float64(k)
		}
		c[k] = f64(f)
	}
	c13, c12, c11, c10, c9, c8, c7 := c[13], c[12], c[11], c[10], c[9], c[8], c[7]
	c6, c5, c4, c3, c2 := c[6], c[5], c[4], c[3], c[2]
	for i := 0; i < n; i += 8 {
		ptr := (*[8]float32)(unsafe.Add(p, 4*i))
		x := archsimd.LoadFloat32x8(ptr).Sub(mv).ConvertToFloat64()
		xc := x.Max(lo).Min(hi)
		k := xc.Mul(log2e).RoundToEvenScaled(0)
		r := xc.Sub(k.Mul(ln2Hi)).Sub(k.Mul(ln2Lo))
		q := c13.Mul(r).Add(c12).Mul(r).Add(c11).Mul(r).Add(c10).Mul(r).Add(c9).Mul(r).Add(c8).Mul(r).Add(c7)
		q = q.Mul(r).Add(c6).Mul(r).Add(c5).Mul(r).Add(c4).Mul(r).Add(c3).Mul(r).Add(c2).Mul(r).Add(one).Mul(r).Add(one)
		scale := k.ConvertToInt64().Add(bias).ShiftLeft(sh52).AsFloat64x8()
		e := q.Mul(scale)
		e = e.Merge(zero, x.GreaterEqual(cut)) // exp(x < -104) rounds to 0 in float32, -inf included
		e = x.Merge(e, x.IsNaN())              // NaN stays NaN
		e.ConvertToFloat32().Store(ptr)
	}
}

// expShiftVec4 is expShiftVec in four float64 lanes (AVX2 and FMA), n a
// multiple of 8.
func expShiftVec4(p unsafe.Pointer, n int, m float32) {
	f64 := archsimd.BroadcastFloat64x4
	mv := archsimd.BroadcastFloat32x4(m)
	var (
		log2e        = f64(1.44269504088896338700e+00)
		ln2Hi, ln2Lo = f64(6.93147180369123816490e-01), f64(1.90821492927058770002e-10)
		lo, hi       = f64(-110), f64(100)
		cut          = f64(-104)
		one          = f64(1)
		magic        = f64(0x1.8p52) // k + magic has k in its low mantissa bits
		bias         = archsimd.BroadcastInt64x4(1023)
		zero         archsimd.Float64x4
	)
	var c [14]archsimd.Float64x4 // c[k] = 1/k!
	f := 1.0
	for k := range c {
		if k > 0 {
			f /= float64(k)
		}
		c[k] = f64(f)
	}
	c13, c12, c11, c10, c9, c8, c7 := c[13], c[12], c[11], c[10], c[9], c[8], c[7]
	c6, c5, c4, c3, c2 := c[6], c[5], c[4], c[3], c[2]
	for i := 0; i < n; i += 4 {
		ptr := (*[4]float32)(unsafe.Add(p, 4*i))
		x := archsimd.LoadFloat32x4(ptr).Sub(mv).ConvertToFloat64()
		xc := x.Max(lo).Min(hi)
		k := xc.Mul(log2e).RoundToEven()
		r := xc.Sub(k.Mul(ln2Hi)).Sub(k.Mul(ln2Lo))
		q := c13.MulAdd(r, c12).MulAdd(r, c11).MulAdd(r, c10).MulAdd(r, c9).MulAdd(r, c8).MulAdd(r, c7)
		q = q.MulAdd(r, c6).MulAdd(r, c5).MulAdd(r, c4).MulAdd(r, c3).MulAdd(r, c2).MulAdd(r, one).MulAdd(r, one)
		scale := k.Add(magic).AsInt64x4().Add(bias).ShiftAllLeft(52).AsFloat64x4()
		e := q.Mul(scale)
		e = e.Merge(zero, x.GreaterEqual(cut)) // exp(x < -104) rounds to 0 in float32, -inf included
		e = x.Merge(e, x.IsNaN())              // NaN stays NaN
		e.ConvertToFloat32().Store(ptr)
	}
}

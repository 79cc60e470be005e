//go:build goexperiment.simd && amd64

package ops

import (
	"encoding/binary"
	"simd/archsimd"
	"unsafe"
)

// vecRow reports whether the row kernels run eight lanes at a time (AVX2;
// this CPU's check, made once). Every kernel ends with VZEROUPPER (see
// clearUpper) and runs the scalar code on the last len%8 elements.
var vecRow = archsimd.X86.AVX2()

type (
	f32x8 = archsimd.Float32x8
	f64x4 = archsimd.Float64x4
)

func ld8(s []float32) f32x8 { return archsimd.LoadFloat32x8((*[8]float32)(s)) }

func addRow(dst, a, b []float32) {
	if !vecRow || len(a) < 8 {
		addScalar(dst, a, b)
		return
	}
	n := len(a) &^ 7
	b, dst = b[:len(a)], dst[:len(a)]
	for i := 0; i < n; i += 8 {
		ld8(a[i:]).Add(ld8(b[i:])).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	addScalar(dst[n:], a[n:], b[n:])
}

func subRow(dst, a, b []float32) {
	if !vecRow || len(a) < 8 {
		subScalar(dst, a, b)
		return
	}
	n := len(a) &^ 7
	b, dst = b[:len(a)], dst[:len(a)]
	for i := 0; i < n; i += 8 {
		ld8(a[i:]).Sub(ld8(b[i:])).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	subScalar(dst[n:], a[n:], b[n:])
}

func mulRow(dst, a, b []float32) {
	if !vecRow || len(a) < 8 {
		mulScalar(dst, a, b)
		return
	}
	n := len(a) &^ 7
	b, dst = b[:len(a)], dst[:len(a)]
	for i := 0; i < n; i += 8 {
		ld8(a[i:]).Mul(ld8(b[i:])).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	mulScalar(dst[n:], a[n:], b[n:])
}

func scaleInto(dst, x []float32, s float32) {
	if !vecRow || len(x) < 8 {
		scaleScalar(dst, x, s)
		return
	}
	n := len(x) &^ 7
	dst = dst[:len(x)]
	sv := archsimd.BroadcastFloat32x8(s)
	for i := 0; i < n; i += 8 {
		ld8(x[i:]).Mul(sv).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	scaleScalar(dst[n:], x[n:], s)
}

// sum8 adds the lanes of two float64 partial sums (lanes 0-3 and 4-7) in a
// fixed order: ((l0+l4) + (l1+l5)) + ((l2+l6) + (l3+l7)).
func sum8(lo, hi f64x4) float64 {
	var a [4]float64
	lo.Add(hi).Store(&a)
	return (a[0] + a[1]) + (a[2] + a[3])
}

func sumRow(x []float32) float64 {
	if !vecRow || len(x) < 8 {
		return sumScalar(x)
	}
	n := len(x) &^ 7
	var lo, hi f64x4
	for i := 0; i < n; i += 8 {
		v := ld8(x[i:])
		lo = lo.Add(v.GetLo().ConvertToFloat64())
		hi = hi.Add(v.GetHi().ConvertToFloat64())
	}
	s := sum8(lo, hi)
	archsimd.ClearAVXUpperBits()
	return s + sumScalar(x[n:])
}

func sumSqRow(x []float32) float64 {
	if !vecRow || len(x) < 8 {
		return sumSqScalar(x)
	}
	n := len(x) &^ 7
	var lo, hi f64x4
	for i := 0; i < n; i += 8 {
		v := ld8(x[i:])
		v = v.Mul(v)
		lo = lo.Add(v.GetLo().ConvertToFloat64())
		hi = hi.Add(v.GetHi().ConvertToFloat64())
	}
	s := sum8(lo, hi)
	archsimd.ClearAVXUpperBits()
	return s + sumSqScalar(x[n:])
}

func centerSumSqRow(dst, x []float32, m float32) float64 {
	if !vecRow || len(x) < 8 {
		return centerSumSqScalar(dst, x, m)
	}
	n := len(x) &^ 7
	dst = dst[:len(x)]
	mv := archsimd.BroadcastFloat32x8(m)
	var lo, hi f64x4
	for i := 0; i < n; i += 8 {
		d := ld8(x[i:]).Sub(mv)
		d.Store((*[8]float32)(dst[i:]))
		d = d.Mul(d)
		lo = lo.Add(d.GetLo().ConvertToFloat64())
		hi = hi.Add(d.GetHi().ConvertToFloat64())
	}
	s := sum8(lo, hi)
	archsimd.ClearAVXUpperBits()
	return s + centerSumSqScalar(dst[n:], x[n:], m)
}

// expConsts are the constants of expF64x4.
type expConsts struct {
	log2e, ln2Hi, ln2Lo, lo, hi, cut, one, magic f64x4
	c                                            [14]f64x4 // c[k] = 1/k!
}

func newExpConsts() *expConsts {
	b := archsimd.BroadcastFloat64x4
	e := &expConsts{
		log2e: b(1.44269504088896338700e+00),
		ln2Hi: b(6.93147180369123816490e-01), ln2Lo: b(1.90821492927058770002e-10),
		lo: b(-110), hi: b(100), cut: b(-104), one: b(1),
		magic: b(1<<52 + 1023),
	}
	f := 1.0
	for k := range e.c {
		if k > 0 {
			f /= float64(k)
		}
		e.c[k] = b(f)
	}
	return e
}

// expF64x4 is exp in float64 on four lanes, the method of expShiftVec
// (exp_simd_amd64.go) with AVX2 and FMA instructions: reduction by ln 2 in
// two parts, degree-13 Taylor polynomial by fused Horner steps, scaling by
// 2^k built in the exponent bits (k + 1023 + 2^52 leaves k + 1023 in the
// low mantissa bits). The error is about 2 ulp of float64, so rounded to
// float32 it is float32(math.Exp(x)) but for about one value in 10^8 (one
// float32 ulp away, TestSiluRowVec). Arguments below -104 give 0 (their
// float32 exp rounds to 0), above 100 exp(100) (whose float32 is +Inf);
// NaN stays NaN.
func expF64x4(x f64x4, k *expConsts) f64x4 {
	xc := x.Max(k.lo).Min(k.hi)
	n := xc.Mul(k.log2e).RoundToEven()
	r := xc.Sub(n.Mul(k.ln2Hi)).Sub(n.Mul(k.ln2Lo))
	c := &k.c
	q := c[13].MulAdd(r, c[12]).MulAdd(r, c[11]).MulAdd(r, c[10]).MulAdd(r, c[9]).MulAdd(r, c[8]).MulAdd(r, c[7])
	q = q.MulAdd(r, c[6]).MulAdd(r, c[5]).MulAdd(r, c[4]).MulAdd(r, c[3]).MulAdd(r, c[2]).MulAdd(r, k.one).MulAdd(r, k.one)
	scale := n.Add(k.magic).AsInt64x4().ShiftAllLeft(52).AsFloat64x4()
	e := q.Mul(scale)
	var zero f64x4
	e = e.Merge(zero, x.GreaterEqual(k.cut))
	return x.Merge(e, x.IsNaN())
}

var expK = newExpConsts()

// vecExp reports whether silu and swiglu run on eight lanes: they need FMA
// as well as AVX2.
var vecExp = vecRow && archsimd.X86.FMA()

// siluVec8 is silu on eight lanes: x / (1 + float32(exp(-x))), the float32
// division as in siluF32.
func siluVec8(x f32x8, k *expConsts, one f32x8) f32x8 {
	var zero f32x8
	nx := zero.Sub(x)
	lo := expF64x4(nx.GetLo().ConvertToFloat64(), k).ConvertToFloat32()
	hi := expF64x4(nx.GetHi().ConvertToFloat64(), k).ConvertToFloat32()
	return x.Div(one.Add(zero.SetLo(lo).SetHi(hi)))
}

func siluRow(dst, x []float32) {
	if !vecExp || len(x) < 8 {
		siluRowScalar(dst, x)
		return
	}
	n := len(x) &^ 7
	dst = dst[:len(x)]
	k := expK
	one := archsimd.BroadcastFloat32x8(1)
	for i := 0; i < n; i += 8 {
		siluVec8(ld8(x[i:]), k, one).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	siluRowScalar(dst[n:], x[n:])
}

func swigluRow(dst, a, b []float32) {
	if !vecExp || len(a) < 8 {
		swigluRowScalar(dst, a, b)
		return
	}
	n := len(a) &^ 7
	b, dst = b[:len(a)], dst[:len(a)]
	k := expK
	one := archsimd.BroadcastFloat32x8(1)
	for i := 0; i < n; i += 8 {
		siluVec8(ld8(a[i:]), k, one).Mul(ld8(b[i:])).Store((*[8]float32)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	swigluRowScalar(dst[n:], a[n:], b[n:])
}

// f32ToF16Row is F32ToF16 on eight lanes in integer arithmetic: normal
// halves round the mantissa to 10 bits to nearest even (a carry moves into
// the exponent, up to inf); subnormal halves come from adding 0.5, whose
// float32 ulp is the half subnormal step, so the FPU rounds to nearest
// even; |f| >= 65536, inf and NaN are ±inf or sign|0x7e00.
func f32ToF16Row(dst []uint16, src []float32) {
	if !vecRow || len(src) < 8 {
		f32ToF16RowScalar(dst, src)
		return
	}
	n := len(src) &^ 7
	dst = dst[:len(src)]
	i32 := archsimd.BroadcastInt32x8
	var (
		absMask  = i32(0x7fffffff)
		bias     = i32(0x38000000)
		round    = i32(0xfff)
		oneI     = i32(1)
		minNorm  = i32(0x38800000)
		maxFin   = i32(0x477fffff)
		infBits  = i32(0x7f800000)
		infH     = i32(0x7c00)
		nanH     = i32(0x7e00)
		half     = archsimd.BroadcastFloat32x8(0.5)
		halfBits = i32(0x3f000000)
	)
	for i := 0; i < n; i += 8 {
		f := ld8(src[i:])
		b := f.AsInt32x8()
		a := b.And(absMask)
		sign := b.ShiftAllRight(16).And(i32(0x8000)) // arithmetic shift, then mask
		norm := a.Sub(bias).Add(round).Add(a.ShiftAllRight(13).And(oneI)).ShiftAllRight(13)
		sub := a.AsFloat32x8().Add(half).AsInt32x8().Sub(halfBits)
		big := nanH.Merge(infH, a.Greater(infBits))
		h := sub.Merge(norm, minNorm.Greater(a))
		h = big.Merge(h, a.Greater(maxFin)).Or(sign)
		h.GetLo().SaturateToUint16Concat(h.GetHi()).Store((*[8]uint16)(dst[i:]))
	}
	archsimd.ClearAVXUpperBits()
	f32ToF16RowScalar(dst[n:], src[n:])
}

func ropeNeoxRow(dst, x, c, s []float32) {
	h := len(c)
	if !vecRow || h < 8 {
		ropeNeoxScalar(dst, x, c, s)
		return
	}
	n := h &^ 7
	s, x, dst = s[:h], x[:2*h], dst[:2*h]
	for i := 0; i < n; i += 8 {
		x0, x1 := ld8(x[i:]), ld8(x[i+h:])
		cv, sv := ld8(c[i:]), ld8(s[i:])
		o0 := x0.Mul(cv).Sub(x1.Mul(sv))
		o1 := x0.Mul(sv).Add(x1.Mul(cv))
		o0.Store((*[8]float32)(dst[i:]))
		o1.Store((*[8]float32)(dst[i+h:]))
	}
	archsimd.ClearAVXUpperBits()
	if n < h {
		// The tail pairs (i, i+h) for i >= n.
		for i := n; i < h; i++ {
			x0, x1 := x[i], x[i+h]
			dst[i] = float32(x0*c[i]) - float32(x1*s[i])
			dst[i+h] = float32(x0*s[i]) + float32(x1*c[i])
		}
	}
}

// The lane patterns of ropeNormalRow.
var (
	ropeSwap  = [8]uint32{1, 0, 3, 2, 5, 4, 7, 6}
	ropeDupLo = [8]uint32{0, 0, 1, 1, 2, 2, 3, 3}
	ropeDupHi = [8]uint32{4, 4, 5, 5, 6, 6, 7, 7}
	ropeSign  = [8]float32{-1, 1, -1, 1, -1, 1, -1, 1}
)

// ropeNormalRow: eight outputs (four pairs) at a time as
// x·[c0 c0 c1 c1 ...] + swap(x)·[-s0 s0 -s1 s1 ...]; negating is exact and
// a + (-b) is a - b, so each lane is the scalar formula's float32 result.
func ropeNormalRow(dst, x, c, s []float32) {
	h := len(c)
	if !vecRow || h < 8 {
		ropeNormalScalar(dst, x, c, s)
		return
	}
	n := h &^ 7 // pairs done eight at a time (16 outputs)
	s, x, dst = s[:h], x[:2*h], dst[:2*h]
	swap := archsimd.LoadUint32x8(&ropeSwap)
	dupLo := archsimd.LoadUint32x8(&ropeDupLo)
	dupHi := archsimd.LoadUint32x8(&ropeDupHi)
	sgn := archsimd.LoadFloat32x8(&ropeSign)
	for i := 0; i < n; i += 8 {
		cv, sv := ld8(c[i:]), ld8(s[i:])
		xa, xb := ld8(x[2*i:]), ld8(x[2*i+8:])
		oa := xa.Mul(cv.Permute(dupLo)).Add(xa.Permute(swap).Mul(sv.Permute(dupLo).Mul(sgn)))
		ob := xb.Mul(cv.Permute(dupHi)).Add(xb.Permute(swap).Mul(sv.Permute(dupHi).Mul(sgn)))
		oa.Store((*[8]float32)(dst[2*i:]))
		ob.Store((*[8]float32)(dst[2*i+8:]))
	}
	archsimd.ClearAVXUpperBits()
	if n < h {
		ropeNormalScalar(dst[2*n:], x[2*n:], c[n:], s[n:])
	}
}

// dequantQ8_0Row dequantizes q8_0 blocks eight values at a time: the int8
// quants sign-extended to int32, converted (exactly) and multiplied by the
// block's scale, as the scalar code.
func dequantQ8_0Row(src []byte, dst []float32) {
	nb := len(dst) / QK8_0
	if !vecRow || nb == 0 {
		dequantQ8_0Scalar(src, dst)
		return
	}
	src = src[:nb*34]
	// The scale goes from the widening table's bits to the lanes through
	// integer registers: a scalar float instruction here would be legacy
	// SSE between 256-bit ones (see clearUpper).
	tab := (*[1 << 16]uint32)(unsafe.Pointer(f16ToF32Table()))
	var tmp [40]byte
	for b := 0; b < nb; b++ {
		o := b * 34
		d := archsimd.BroadcastUint32x8(tab[binary.LittleEndian.Uint16(src[o:])]).AsFloat32x8()
		q := src[o+2 : o+34]
		if o+42 > len(src) {
			// The last block: its last 16-byte load would pass the end.
			copy(tmp[:], q)
			q = tmp[:]
		} else {
			q = src[o+2 : o+42]
		}
		y := dst[b*QK8_0 : (b+1)*QK8_0]
		for k := 0; k < 4; k++ {
			v := archsimd.LoadInt8x16((*[16]int8)(unsafe.Pointer(&q[8*k : 8*k+16][0])))
			v.ExtendLo8ToInt32().ConvertToFloat32().Mul(d).Store((*[8]float32)(y[8*k:]))
		}
	}
	archsimd.ClearAVXUpperBits()
}

//go:build goexperiment.simd && amd64

package cpu

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
)

type (
	f32x8 = archsimd.Float32x8
	f64x4 = archsimd.Float64x4
)

// at is the eight float32 at p + 4i. The kernels check their slices'
// lengths once and then index with at, without per-step bounds checks.
func at(p unsafe.Pointer, i int) *[8]float32 { return (*[8]float32)(unsafe.Add(p, 4*i)) }

func ptr(s []float32) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

// F32ToF16Row is F32ToF16 on eight lanes in integer arithmetic: normal
// halves round the mantissa to 10 bits to nearest even (a carry moves into
// the exponent, up to inf); subnormal halves come from adding 0.5, whose
// float32 ulp is the half subnormal step, so the FPU rounds to nearest
// even; |f| >= 65536, inf and NaN are ±inf or sign|0x7e00.
func (ks *Kernels) F32ToF16Row(dst []uint16, src []float32) {
	switch {
	case !ks.Row || len(src) < 8:
		f32ToF16RowScalar(dst, src)
	case ks.F16C:
		ks.f32ToF16RowF16C(dst, src)
	default:
		f32ToF16RowInt(dst, src)
	}
}

// f32ToF16RowInt is f32ToF16Row without F16C (len(src) >= 8).
func f32ToF16RowInt(dst []uint16, src []float32) {
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
	ps, pd := ptr(src), unsafe.Pointer(unsafe.SliceData(dst))
	for i := 0; i < n; i += 8 {
		f := archsimd.LoadFloat32x8(at(ps, i))
		b := f.AsInt32x8()
		a := b.And(absMask)
		sign := b.ShiftAllRight(16).And(i32(0x8000)) // arithmetic shift, then mask
		norm := a.Sub(bias).Add(round).Add(a.ShiftAllRight(13).And(oneI)).ShiftAllRight(13)
		sub := a.AsFloat32x8().Add(half).AsInt32x8().Sub(halfBits)
		big := nanH.Merge(infH, a.Greater(infBits))
		h := sub.Merge(norm, minNorm.Greater(a))
		h = big.Merge(h, a.Greater(maxFin)).Or(sign)
		h.GetLo().SaturateToUint16Concat(h.GetHi()).Store((*[8]uint16)(unsafe.Add(pd, 2*i)))
	}
	archsimd.ClearAVXUpperBits()
	f32ToF16RowScalar(dst[n:], src[n:])
}

// RopeNeoxRow is ropeNeoxScalar: neox rotation of x by cosines c and sines
// s into dst.
func (ks *Kernels) RopeNeoxRow(dst, x, c, s []float32) {
	h := len(c)
	if !ks.Row || h < 8 {
		ropeNeoxScalar(dst, x, c, s)
		return
	}
	n := h &^ 7
	s, x, dst = s[:h], x[:2*h], dst[:2*h]
	pc, ps, px, pd := ptr(c), ptr(s), ptr(x), ptr(dst)
	for i := 0; i < n; i += 8 {
		x0, x1 := archsimd.LoadFloat32x8(at(px, i)), archsimd.LoadFloat32x8(at(px, i+h))
		cv, sv := archsimd.LoadFloat32x8(at(pc, i)), archsimd.LoadFloat32x8(at(ps, i))
		x0.Mul(cv).Sub(x1.Mul(sv)).Store(at(pd, i))
		x0.Mul(sv).Add(x1.Mul(cv)).Store(at(pd, i+h))
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

// ropeSwap exchanges the lanes of each pair.
var ropeSwap = [8]uint32{1, 0, 3, 2, 5, 4, 7, 6}

// RopeNormalRow: eight outputs (four pairs) at a time as x·cc + swap(x)·ss
// with ropeExpand's cc = [c0 c0 c1 c1 ...] and ss = [-s0 s0 -s1 s1 ...];
// negating is exact and a + (-b) is a - b, so each lane is the scalar
// formula's float32 result.
func (ks *Kernels) RopeNormalRow(dst, x, cc, ss []float32) {
	n2 := len(cc) &^ 1
	if !ks.Row || n2 < 8 {
		ropeNormalScalar(dst, x, cc, ss)
		return
	}
	n := n2 &^ 7
	ss, x, dst = ss[:n2], x[:n2], dst[:n2]
	swap := archsimd.LoadUint32x8(&ropeSwap)
	pc, ps, px, pd := ptr(cc), ptr(ss), ptr(x), ptr(dst)
	for i := 0; i < n; i += 8 {
		v := archsimd.LoadFloat32x8(at(px, i))
		v.Mul(archsimd.LoadFloat32x8(at(pc, i))).Add(v.Permute(swap).Mul(archsimd.LoadFloat32x8(at(ps, i)))).Store(at(pd, i))
	}
	archsimd.ClearAVXUpperBits()
	if n < n2 {
		ropeNormalScalar(dst[n:], x[n:], cc[n:n2], ss[n:])
	}
}

// DequantQ8_0Row dequantizes q8_0 blocks eight values at a time: the int8
// quants sign-extended to int32, converted (exactly) and multiplied by the
// block's scale, as the scalar code. Each 16-byte load reads 8 bytes past
// the quants it uses, so the last block goes through the scalar code.
func (ks *Kernels) DequantQ8_0Row(src []byte, dst []float32) {
	nb := len(dst) / codec.QK8_0
	if !ks.Row || nb < 2 {
		dequantQ8_0Scalar(src, dst)
		return
	}
	src, dst = src[:nb*34], dst[:nb*codec.QK8_0]
	// The scale goes from the widening table's bits to the lanes through
	// integer registers: a scalar float instruction here would be legacy
	// SSE between 256-bit ones (see clearUpper).
	tab := (*[1 << 16]uint32)(unsafe.Pointer(ops.F16ToF32Table()))
	ps, pd := unsafe.Pointer(unsafe.SliceData(src)), ptr(dst)
	for b := 0; b < nb-1; b++ { // block b's loads end at 34b + 42 <= len(src)
		q := unsafe.Add(ps, 34*b)
		d := archsimd.BroadcastUint32x8(tab[binary.LittleEndian.Uint16(src[34*b:])]).AsFloat32x8()
		y := 32 * b
		archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(q, 2))).ExtendLo8ToInt32().ConvertToFloat32().Mul(d).Store(at(pd, y))
		archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(q, 10))).ExtendLo8ToInt32().ConvertToFloat32().Mul(d).Store(at(pd, y+8))
		archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(q, 18))).ExtendLo8ToInt32().ConvertToFloat32().Mul(d).Store(at(pd, y+16))
		archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(q, 26))).ExtendLo8ToInt32().ConvertToFloat32().Mul(d).Store(at(pd, y+24))
	}
	archsimd.ClearAVXUpperBits()
	dequantQ8_0Scalar(src[34*(nb-1):], dst[32*(nb-1):])
}

// trigConsts are the constants of sincosF64x4: those of Go's math.sin and
// math.cos.
type trigConsts struct {
	absMask, signBit, two52Bits, one, two, three, four, seven archsimd.Int64x4
	fourOverPi, two52, oneF, half, pi4a, pi4b, pi4c           f64x4
	s, c                                                      [6]f64x4
}

var trigK = func() *trigConsts {
	f, i := archsimd.BroadcastFloat64x4, archsimd.BroadcastInt64x4
	k := &trigConsts{
		absMask: i(math.MaxInt64), signBit: i(math.MinInt64), two52Bits: i(int64(math.Float64bits(1 << 52))),
		one: i(1), two: i(2), three: i(3), four: i(4), seven: i(7),
		fourOverPi: f(4 / math.Pi), two52: f(1 << 52), oneF: f(1), half: f(0.5),
		pi4a: f(7.85398125648498535156e-1), pi4b: f(3.77489470793079817668e-8), pi4c: f(2.69515142907905952645e-15),
	}
	sin := [6]float64{1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
		-1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1}
	cos := [6]float64{-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
		2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2}
	for j := range sin {
		k.s[j], k.c[j] = f(sin[j]), f(cos[j])
	}
	return k
}()

// sincosF64x4 is math.Sin and math.Cos on four lanes with |t| < 2^29: Go's
// own algorithm (octant by truncating t·4/π, Cody-Waite reduction by π/4
// in three parts, the Cephes polynomials, unfused multiplies and adds in
// the same order), so each lane has the scalar functions' bits
// (TestSincosRowVec).
func sincosF64x4(t f64x4, k *trigConsts) (sn, cs f64x4) {
	tb := t.AsInt64x4()
	sgn := tb.And(k.signBit)
	x := tb.And(k.absMask).AsFloat64x4()
	y := x.Mul(k.fourOverPi).Trunc()
	j := y.Add(k.two52).AsInt64x4().Sub(k.two52Bits) // y as an integer
	odd := j.And(k.one).Equal(k.one)
	j = j.Add(j.And(k.one))
	y = y.Add(k.oneF).Merge(y, odd)
	j = j.And(k.seven)
	z := x.Sub(y.Mul(k.pi4a)).Sub(y.Mul(k.pi4b)).Sub(y.Mul(k.pi4c))
	hi := j.And(k.four).Equal(k.four) // j > 3: j -= 4, both signs flip
	j = j.And(k.three)
	swap := j.Add(k.one).And(k.two).Equal(k.two) // j == 1 || j == 2
	cneg := j.And(k.two).Equal(k.two)            // then j > 1 flips cos
	zz := z.Mul(z)
	s, c := &k.s, &k.c
	ps := s[0].Mul(zz).Add(s[1]).Mul(zz).Add(s[2]).Mul(zz).Add(s[3]).Mul(zz).Add(s[4]).Mul(zz).Add(s[5])
	pc := c[0].Mul(zz).Add(c[1]).Mul(zz).Add(c[2]).Mul(zz).Add(c[3]).Mul(zz).Add(c[4]).Mul(zz).Add(c[5])
	sp := z.Add(z.Mul(zz).Mul(ps))
	cp := k.oneF.Sub(k.half.Mul(zz)).Add(zz.Mul(zz).Mul(pc))
	var zero archsimd.Int64x4
	hiBit := k.signBit.Merge(zero, hi)
	sn = cp.Merge(sp, swap).AsInt64x4().Xor(sgn).Xor(hiBit).AsFloat64x4()
	cs = sp.Merge(cp, swap).AsInt64x4().Xor(hiBit).Xor(k.signBit.Merge(zero, cneg)).AsFloat64x4()
	return sn, cs
}

// sincosF64x4x2 is sincosF64x4 on two vectors at once: one body with the
// constants loaded once and two independent chains, which the CPU
// overlaps (each call of sincosF64x4 is one long dependency chain). The
// lanes do exactly sincosF64x4's operations.
func sincosF64x4x2(t0, t1 f64x4, k *trigConsts) (sn0, cs0, sn1, cs1 f64x4) {
	tb0 := t0.AsInt64x4()
	tb1 := t1.AsInt64x4()
	sgn0 := tb0.And(k.signBit)
	sgn1 := tb1.And(k.signBit)
	x0 := tb0.And(k.absMask).AsFloat64x4()
	x1 := tb1.And(k.absMask).AsFloat64x4()
	y0 := x0.Mul(k.fourOverPi).Trunc()
	y1 := x1.Mul(k.fourOverPi).Trunc()
	j0 := y0.Add(k.two52).AsInt64x4().Sub(k.two52Bits)
	j1 := y1.Add(k.two52).AsInt64x4().Sub(k.two52Bits)
	odd0 := j0.And(k.one).Equal(k.one)
	odd1 := j1.And(k.one).Equal(k.one)
	j0 = j0.Add(j0.And(k.one))
	j1 = j1.Add(j1.And(k.one))
	y0 = y0.Add(k.oneF).Merge(y0, odd0)
	y1 = y1.Add(k.oneF).Merge(y1, odd1)
	j0 = j0.And(k.seven)
	j1 = j1.And(k.seven)
	z0 := x0.Sub(y0.Mul(k.pi4a)).Sub(y0.Mul(k.pi4b)).Sub(y0.Mul(k.pi4c))
	z1 := x1.Sub(y1.Mul(k.pi4a)).Sub(y1.Mul(k.pi4b)).Sub(y1.Mul(k.pi4c))
	hi0 := j0.And(k.four).Equal(k.four)
	hi1 := j1.And(k.four).Equal(k.four)
	j0 = j0.And(k.three)
	j1 = j1.And(k.three)
	swap0 := j0.Add(k.one).And(k.two).Equal(k.two)
	swap1 := j1.Add(k.one).And(k.two).Equal(k.two)
	cneg0 := j0.And(k.two).Equal(k.two)
	cneg1 := j1.And(k.two).Equal(k.two)
	zz0 := z0.Mul(z0)
	zz1 := z1.Mul(z1)
	s, c := &k.s, &k.c
	ps0 := s[0].Mul(zz0).Add(s[1]).Mul(zz0).Add(s[2]).Mul(zz0).Add(s[3]).Mul(zz0).Add(s[4]).Mul(zz0).Add(s[5])
	ps1 := s[0].Mul(zz1).Add(s[1]).Mul(zz1).Add(s[2]).Mul(zz1).Add(s[3]).Mul(zz1).Add(s[4]).Mul(zz1).Add(s[5])
	pc0 := c[0].Mul(zz0).Add(c[1]).Mul(zz0).Add(c[2]).Mul(zz0).Add(c[3]).Mul(zz0).Add(c[4]).Mul(zz0).Add(c[5])
	pc1 := c[0].Mul(zz1).Add(c[1]).Mul(zz1).Add(c[2]).Mul(zz1).Add(c[3]).Mul(zz1).Add(c[4]).Mul(zz1).Add(c[5])
	sp0 := z0.Add(z0.Mul(zz0).Mul(ps0))
	sp1 := z1.Add(z1.Mul(zz1).Mul(ps1))
	cp0 := k.oneF.Sub(k.half.Mul(zz0)).Add(zz0.Mul(zz0).Mul(pc0))
	cp1 := k.oneF.Sub(k.half.Mul(zz1)).Add(zz1.Mul(zz1).Mul(pc1))
	var zero archsimd.Int64x4
	hiBit0 := k.signBit.Merge(zero, hi0)
	hiBit1 := k.signBit.Merge(zero, hi1)
	sn0 = cp0.Merge(sp0, swap0).AsInt64x4().Xor(sgn0).Xor(hiBit0).AsFloat64x4()
	sn1 = cp1.Merge(sp1, swap1).AsInt64x4().Xor(sgn1).Xor(hiBit1).AsFloat64x4()
	cs0 = sp0.Merge(cp0, swap0).AsInt64x4().Xor(hiBit0).Xor(k.signBit.Merge(zero, cneg0)).AsFloat64x4()
	cs1 = sp1.Merge(cp1, swap1).AsInt64x4().Xor(hiBit1).Xor(k.signBit.Merge(zero, cneg1)).AsFloat64x4()
	return sn0, cs0, sn1, cs1
}

// SincosRow sets c[i] = float32(math.Cos(float64(th[i])))·m and s[i] the
// same with math.Sin, eight (then four) lanes at a time, and reports whether it did:
// it needs AVX2 and every |th[i]| < 2^29 (not NaN), else the caller runs
// the scalar code.
func (ks *Kernels) SincosRow(c, s, th []float32, m float32) bool {
	n := len(th)
	if !ks.Row || n < 4 {
		return false
	}
	c, s = c[:n], s[:n]
	for _, v := range th {
		if !(v < 1<<29 && v > -(1<<29)) {
			return false
		}
	}
	k := trigK
	// m stays in a 256-bit register (mv) through the loops, not m nor a
	// 128-bit vector: those the compiler reloads after each call by
	// legacy SSE moves (MOVSS, MOVUPS), which with the upper halves of
	// the Y registers dirty cost Intel cores dearly (Sapphire Rapids:
	// ROPE n = 1 2.7 µs against 1.55 for the plain build's scalar sines);
	// a 256-bit reload is VEX-encoded.
	mv := archsimd.BroadcastFloat32x8(m)
	pt, pc, ps := ptr(th), ptr(c), ptr(s)
	n8, n4 := n&^7, n&^3
	ld := func(i int) f64x4 {
		return archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(pt, 4*i))).ConvertToFloat64()
	}
	var z archsimd.Float32x8
	for i := 0; i < n8; i += 8 {
		sn0, cs0, sn1, cs1 := sincosF64x4x2(ld(i), ld(i+4), k)
		z.SetLo(cs0.ConvertToFloat32()).SetHi(cs1.ConvertToFloat32()).Mul(mv).Store(at(pc, i))
		z.SetLo(sn0.ConvertToFloat32()).SetHi(sn1.ConvertToFloat32()).Mul(mv).Store(at(ps, i))
	}
	for i := n8; i < n4; i += 4 {
		sn, cs := sincosF64x4(ld(i), k)
		cs.ConvertToFloat32().Mul(mv.GetLo()).Store((*[4]float32)(unsafe.Add(pc, 4*i)))
		sn.ConvertToFloat32().Mul(mv.GetLo()).Store((*[4]float32)(unsafe.Add(ps, 4*i)))
	}
	var mm [8]float32
	mv.Store(&mm)
	m = mm[0]
	archsimd.ClearAVXUpperBits()
	for i := n4; i < n; i++ {
		sn, cs := math.Sincos(float64(th[i]))
		c[i], s[i] = float32(cs)*m, float32(sn)*m
	}
	return true
}

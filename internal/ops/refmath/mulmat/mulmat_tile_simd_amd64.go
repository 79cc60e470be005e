//go:build goexperiment.simd && amd64

package mulmat

import (
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// The eight-row kernels of the quantized MulMat (q8_0 and q4_0 weights,
// vector build on a CPU with AVX2): eight weight rows against one row of
// int8 activations. Per block, each row's integer dot product is exact (as
// in q8_0Dot and q4_0Dot); the eight of them go to the eight lanes of one
// vector, which is converted to float32 and multiplied by the per-lane
// float32(da·db), and added to a running vector sum. Each lane thus does,
// for its row, the float32 operations of the scalar kernels (dotQ8_0,
// dotQ4_0) in the same order: the results are bit-identical, and the float
// work is vector code too, with no VZEROUPPER inside the loop.
//
// The caller gathers the rows' f16 block scales, widened, into da (block
// j of row r at da[8j+r], as float32 bits), and pads the activation scales
// d (and sums s) with at least 3 readable values after the last block: a
// block's db is broadcast from a four-lane load.

// q8_0Rows8Vec returns the q8_0 dot products of the rows at p[0..7] (nb
// blocks each) with the activations y (scales d).
func q8_0Rows8Vec(p *[8]unsafe.Pointer, y, d, da unsafe.Pointer, nb int) (out [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 34*j + 2
		yv := cpu.LoadI8x32(y, 32*j)
		h01 := q8Dot(p0, o, yv, ones).AddPairsGrouped(q8Dot(p1, o, yv, ones))
		h23 := q8Dot(p2, o, yv, ones).AddPairsGrouped(q8Dot(p3, o, yv, ones))
		a := h01.AddPairsGrouped(h23)
		h45 := q8Dot(p4, o, yv, ones).AddPairsGrouped(q8Dot(p5, o, yv, ones))
		h67 := q8Dot(p6, o, yv, ones).AddPairsGrouped(q8Dot(p7, o, yv, ones))
		b := h45.AddPairsGrouped(h67)
		is := a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b))
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d, 4*j))).Broadcast1To8()
		acc = acc.Add(is.ConvertToFloat32().Mul(cpu.LoadF32x8(da, 32*j).Mul(db)))
	}
	acc.Store(&out)
	archsimd.ClearAVXUpperBits()
	return out
}

// q8Dot is q8_0Dot of the 32 quants at x+o with yv, in eight int32 lanes.
func q8Dot(x unsafe.Pointer, o int, yv archsimd.Int8x32, ones archsimd.Int16x16) archsimd.Int32x8 {
	w := cpu.LoadI8x32(x, o)
	return w.Abs().AsUint8x32().DotProductPairsSaturated(yv.CopySign(w)).DotProductPairs(ones)
}

// q4_0Rows8Vec is q8_0Rows8Vec for q4_0 rows, s holding the activations'
// per-block sums.
func q4_0Rows8Vec(p *[8]unsafe.Pointer, y, d, s, da unsafe.Pointer, nb int) (out [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	m4, four := q4Consts()
	three := archsimd.BroadcastInt32x8(3)
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 18*j + 2
		yv := cpu.LoadI8x32(y, 32*j)
		h01 := q4Dot(p0, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p1, o, yv, ones, m4, four))
		h23 := q4Dot(p2, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p3, o, yv, ones, m4, four))
		a := h01.AddPairsGrouped(h23)
		h45 := q4Dot(p4, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p5, o, yv, ones, m4, four))
		h67 := q4Dot(p6, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p7, o, yv, ones, m4, four))
		b := h45.AddPairsGrouped(h67)
		sy := archsimd.LoadInt32x4((*[4]int32)(unsafe.Add(s, 4*j))).Broadcast1To8().ShiftLeft(three)
		is := a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b)).Sub(sy)
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d, 4*j))).Broadcast1To8()
		acc = acc.Add(is.ConvertToFloat32().Mul(cpu.LoadF32x8(da, 32*j).Mul(db)))
	}
	acc.Store(&out)
	archsimd.ClearAVXUpperBits()
	return out
}

// q4Dot is q4_0Dot of the 16 nibble bytes at x+o with yv: the bytes go
// to both halves of a vector, shifted right by 0 (low half) and 4 (high
// half, by the lanes of sh) and masked by m4. (All constants are 256-bit:
// the compiler spills and reloads 128-bit ones with legacy SSE moves.)
func q4Dot(x unsafe.Pointer, o int, yv archsimd.Int8x32, ones archsimd.Int16x16, m4 archsimd.Uint8x32, sh archsimd.Uint32x8) archsimd.Int32x8 {
	b := cpu.LoadU8x16(x, o)
	w := archsimd.Uint8x32{}.SetLo(b).SetHi(b).AsUint32x8().ShiftRight(sh).AsUint8x32().And(m4)
	return w.DotProductPairsSaturated(yv).DotProductPairs(ones)
}

// q4Consts are q4Dot's constants.
func q4Consts() (m4 archsimd.Uint8x32, sh archsimd.Uint32x8) {
	return archsimd.BroadcastUint8x32(0x0f), archsimd.LoadUint32x8(&[8]uint32{0, 0, 0, 0, 4, 4, 4, 4})
}

// widenF16sVec sets dst[i] to the f16 value src[i] widened (exactly, as
// F16ToF32; with F16C by VCVTPH2PS, which makes signalling NaNs quiet),
// for the whole groups of eight of src.
func (ks *Kernels) widenF16sVec(src []uint16, dst []float32) {
	n := len(src)
	if n == 0 {
		return
	}
	dst = dst[:n]
	if ks.F16Dot {
		if n8 := n &^ 7; n8 > 0 {
			widenF16F16C(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n8)
		}
		return
	}
	keep, expo, inf, scale := cpu.F16Consts()
	ps, pd := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	for i := 0; i+8 <= n; i += 8 {
		cpu.WidenF16x8(ps, 2*i, keep, expo, inf, scale).Store((*[8]float32)(unsafe.Add(pd, 4*i)))
	}
	archsimd.ClearAVXUpperBits()
}

// The fused forms compute the rows' block scales themselves, from the
// weight rows, instead of reading them from da: for a single column the
// separate pass that gathers them (rows8.load) costs more than gathering
// them in the loop, where the weights are read anyway.

// scales8 widens the f16 scales at p[0..7]+o (the start of a block of
// each row) into the eight lanes of a vector, as widenF16x8 does.
func scales8(p0, p1, p2, p3, p4, p5, p6, p7 unsafe.Pointer, o int, keep, expo, inf archsimd.Int32x8, scale archsimd.Float32x8) archsimd.Float32x8 {
	h := func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(unsafe.Add(p, o))) }
	lo := h(p0) | h(p1)<<16 | h(p2)<<32 | h(p3)<<48
	hi := h(p4) | h(p5)<<16 | h(p6)<<32 | h(p7)<<48
	v := archsimd.Uint64x2{}.SetElem(0, lo).SetElem(1, hi)
	x := v.AsInt16x8().ExtendToInt32().ShiftAllLeft(13)
	f := x.And(keep).AsFloat32x8().Mul(scale)
	return f.AsInt32x8().Or(x.And(expo).Equal(expo).ToInt32x8().And(inf)).AsFloat32x8()
}

// q8_0Rows8FusedVec is q8_0Rows8Vec computing the scales itself.
func q8_0Rows8FusedVec(p *[8]unsafe.Pointer, y, d unsafe.Pointer, nb int) (out [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	keep, expo, inf, scale := cpu.F16Consts()
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 34*j + 2
		yv := cpu.LoadI8x32(y, 32*j)
		h01 := q8Dot(p0, o, yv, ones).AddPairsGrouped(q8Dot(p1, o, yv, ones))
		h23 := q8Dot(p2, o, yv, ones).AddPairsGrouped(q8Dot(p3, o, yv, ones))
		a := h01.AddPairsGrouped(h23)
		h45 := q8Dot(p4, o, yv, ones).AddPairsGrouped(q8Dot(p5, o, yv, ones))
		h67 := q8Dot(p6, o, yv, ones).AddPairsGrouped(q8Dot(p7, o, yv, ones))
		b := h45.AddPairsGrouped(h67)
		is := a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b))
		da := scales8(p0, p1, p2, p3, p4, p5, p6, p7, o-2, keep, expo, inf, scale)
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d, 4*j))).Broadcast1To8()
		acc = acc.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
	}
	acc.Store(&out)
	archsimd.ClearAVXUpperBits()
	return out
}

// q4_0Rows8FusedVec is q4_0Rows8Vec computing the scales itself.
func q4_0Rows8FusedVec(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int) (out [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	m4, four := q4Consts()
	three := archsimd.BroadcastInt32x8(3)
	keep, expo, inf, scale := cpu.F16Consts()
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 18*j + 2
		yv := cpu.LoadI8x32(y, 32*j)
		h01 := q4Dot(p0, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p1, o, yv, ones, m4, four))
		h23 := q4Dot(p2, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p3, o, yv, ones, m4, four))
		a := h01.AddPairsGrouped(h23)
		h45 := q4Dot(p4, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p5, o, yv, ones, m4, four))
		h67 := q4Dot(p6, o, yv, ones, m4, four).AddPairsGrouped(q4Dot(p7, o, yv, ones, m4, four))
		b := h45.AddPairsGrouped(h67)
		sy := archsimd.LoadInt32x4((*[4]int32)(unsafe.Add(s, 4*j))).Broadcast1To8().ShiftLeft(three)
		is := a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b)).Sub(sy)
		da := scales8(p0, p1, p2, p3, p4, p5, p6, p7, o-2, keep, expo, inf, scale)
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d, 4*j))).Broadcast1To8()
		acc = acc.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
	}
	acc.Store(&out)
	archsimd.ClearAVXUpperBits()
	return out
}

// q4_0Rows8Fused2Vec is q4_0Rows8FusedVec against two activation rows at
// once (quants y0, y1, scales d0, d1, sums s0, s1): each weight block is
// unpacked once and its scales widened once for both. Each column's lanes
// do the operations of q4_0Rows8FusedVec in the same order.
func q4_0Rows8Fused2Vec(p *[8]unsafe.Pointer, y0, d0, s0, y1, d1, s1 unsafe.Pointer, nb int) (out0, out1 [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	m4, four := q4Consts()
	three := archsimd.BroadcastInt32x8(3)
	keep, expo, inf, scale := cpu.F16Consts()
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc0, acc1 archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 18*j + 2
		yv0, yv1 := cpu.LoadI8x32(y0, 32*j), cpu.LoadI8x32(y1, 32*j)
		w := q4Unpack(p0, o, m4, four)
		x := q4Unpack(p1, o, m4, four)
		h01a := q4DotW(w, yv0, ones).AddPairsGrouped(q4DotW(x, yv0, ones))
		h01b := q4DotW(w, yv1, ones).AddPairsGrouped(q4DotW(x, yv1, ones))
		w = q4Unpack(p2, o, m4, four)
		x = q4Unpack(p3, o, m4, four)
		aa := h01a.AddPairsGrouped(q4DotW(w, yv0, ones).AddPairsGrouped(q4DotW(x, yv0, ones)))
		ab := h01b.AddPairsGrouped(q4DotW(w, yv1, ones).AddPairsGrouped(q4DotW(x, yv1, ones)))
		w = q4Unpack(p4, o, m4, four)
		x = q4Unpack(p5, o, m4, four)
		h45a := q4DotW(w, yv0, ones).AddPairsGrouped(q4DotW(x, yv0, ones))
		h45b := q4DotW(w, yv1, ones).AddPairsGrouped(q4DotW(x, yv1, ones))
		w = q4Unpack(p6, o, m4, four)
		x = q4Unpack(p7, o, m4, four)
		ba := h45a.AddPairsGrouped(q4DotW(w, yv0, ones).AddPairsGrouped(q4DotW(x, yv0, ones)))
		bb := h45b.AddPairsGrouped(q4DotW(w, yv1, ones).AddPairsGrouped(q4DotW(x, yv1, ones)))
		da := scales8(p0, p1, p2, p3, p4, p5, p6, p7, o-2, keep, expo, inf, scale)
		sy := archsimd.LoadInt32x4((*[4]int32)(unsafe.Add(s0, 4*j))).Broadcast1To8().ShiftLeft(three)
		is := aa.Select128FromPair(0, 2, ba).Add(aa.Select128FromPair(1, 3, ba)).Sub(sy)
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d0, 4*j))).Broadcast1To8()
		acc0 = acc0.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
		sy = archsimd.LoadInt32x4((*[4]int32)(unsafe.Add(s1, 4*j))).Broadcast1To8().ShiftLeft(three)
		is = ab.Select128FromPair(0, 2, bb).Add(ab.Select128FromPair(1, 3, bb)).Sub(sy)
		db = archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d1, 4*j))).Broadcast1To8()
		acc1 = acc1.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
	}
	acc0.Store(&out0)
	acc1.Store(&out1)
	archsimd.ClearAVXUpperBits()
	return out0, out1
}

// q4Unpack is q4Dot's unpacking of the 16 nibble bytes at x+o: their low
// nibbles in the low half, their high nibbles in the high half.
func q4Unpack(x unsafe.Pointer, o int, m4 archsimd.Uint8x32, sh archsimd.Uint32x8) archsimd.Uint8x32 {
	b := cpu.LoadU8x16(x, o)
	return archsimd.Uint8x32{}.SetLo(b).SetHi(b).AsUint32x8().ShiftRight(sh).AsUint8x32().And(m4)
}

// q4DotW is q4Dot of the unpacked weights w with yv.
func q4DotW(w archsimd.Uint8x32, yv archsimd.Int8x32, ones archsimd.Int16x16) archsimd.Int32x8 {
	return w.DotProductPairsSaturated(yv).DotProductPairs(ones)
}

// q8_0Rows8Fused2Vec is q8_0Rows8FusedVec against two activation rows at
// once (quants y0, y1, scales d0, d1): each weight block is loaded once
// and its scales widened once for both. Each column's lanes do the
// operations of q8_0Rows8FusedVec in the same order.
func q8_0Rows8Fused2Vec(p *[8]unsafe.Pointer, y0, d0, y1, d1 unsafe.Pointer, nb int) (out0, out1 [8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	keep, expo, inf, scale := cpu.F16Consts()
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc0, acc1 archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 34*j + 2
		yv0, yv1 := cpu.LoadI8x32(y0, 32*j), cpu.LoadI8x32(y1, 32*j)
		w, x := cpu.LoadI8x32(p0, o), cpu.LoadI8x32(p1, o)
		h01a := q8DotW(w, yv0, ones).AddPairsGrouped(q8DotW(x, yv0, ones))
		h01b := q8DotW(w, yv1, ones).AddPairsGrouped(q8DotW(x, yv1, ones))
		w, x = cpu.LoadI8x32(p2, o), cpu.LoadI8x32(p3, o)
		aa := h01a.AddPairsGrouped(q8DotW(w, yv0, ones).AddPairsGrouped(q8DotW(x, yv0, ones)))
		ab := h01b.AddPairsGrouped(q8DotW(w, yv1, ones).AddPairsGrouped(q8DotW(x, yv1, ones)))
		w, x = cpu.LoadI8x32(p4, o), cpu.LoadI8x32(p5, o)
		h45a := q8DotW(w, yv0, ones).AddPairsGrouped(q8DotW(x, yv0, ones))
		h45b := q8DotW(w, yv1, ones).AddPairsGrouped(q8DotW(x, yv1, ones))
		w, x = cpu.LoadI8x32(p6, o), cpu.LoadI8x32(p7, o)
		ba := h45a.AddPairsGrouped(q8DotW(w, yv0, ones).AddPairsGrouped(q8DotW(x, yv0, ones)))
		bb := h45b.AddPairsGrouped(q8DotW(w, yv1, ones).AddPairsGrouped(q8DotW(x, yv1, ones)))
		da := scales8(p0, p1, p2, p3, p4, p5, p6, p7, o-2, keep, expo, inf, scale)
		is := aa.Select128FromPair(0, 2, ba).Add(aa.Select128FromPair(1, 3, ba))
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d0, 4*j))).Broadcast1To8()
		acc0 = acc0.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
		is = ab.Select128FromPair(0, 2, bb).Add(ab.Select128FromPair(1, 3, bb))
		db = archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d1, 4*j))).Broadcast1To8()
		acc1 = acc1.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
	}
	acc0.Store(&out0)
	acc1.Store(&out1)
	archsimd.ClearAVXUpperBits()
	return out0, out1
}

// q8DotW is q8Dot of the 32 quants w with yv.
func q8DotW(w, yv archsimd.Int8x32, ones archsimd.Int16x16) archsimd.Int32x8 {
	return w.Abs().AsUint8x32().DotProductPairsSaturated(yv.CopySign(w)).DotProductPairs(ones)
}

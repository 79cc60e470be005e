//go:build goexperiment.simd && amd64

package mulmat

import (
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// An AVX-512 form of the fused eight-row q4_0 kernel (mulmat_tile_simd_amd64.go),
// used when the CPU has AVX-512 (F, CD, BW, DQ, VL: vec512). Each 512-bit
// vector holds one block of four rows, 16 nibble bytes per 128-bit lane: its
// low nibbles (elements 0-15) and high nibbles (16-31) are multiplied by the
// block's activations 0-15 and 16-31, broadcast to the four lanes, by
// VPMADDUBSW (q4 ≤ 15, |y| ≤ 127: no saturation); the two int16 products
// (each |·| ≤ 2·15·128) are added without overflow and summed to four int32
// lanes per row by VPMADDWD. Those are reduced to one exact int32 per row,
// rows 0-7 in the lanes of a 256-bit vector, and from there on the float32
// work is that of q4_0Rows8FusedVec, lane by lane in the same order: the
// results are bit-identical to it and so to the scalar dotQ4_0. (The same
// for two columns measured slower than q4_0Rows8Fused2Vec, so there is none.)

// q4x4 returns the q4_0 block at offset o of the rows p0..p3, one row per
// 128-bit lane, its low nibbles in lo and its high nibbles in hi.
func q4x4(p0, p1, p2, p3 unsafe.Pointer, o int, m4 archsimd.Uint8x64, four archsimd.Uint32x16) (lo, hi archsimd.Uint8x64) {
	w := archsimd.Uint8x64{}.SetLo(archsimd.Uint8x32{}.SetLo(cpu.LoadU8x16(p0, o)).SetHi(cpu.LoadU8x16(p1, o))).
		SetHi(archsimd.Uint8x32{}.SetLo(cpu.LoadU8x16(p2, o)).SetHi(cpu.LoadU8x16(p3, o)))
	return w.And(m4), w.AsUint32x16().ShiftRight(four).AsUint8x64().And(m4)
}

// y4 returns the 16 int8 activations at y+off in each 128-bit lane.
func y4(y unsafe.Pointer, off int) archsimd.Int8x64 {
	v := archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(y, off)))
	h := archsimd.Int8x32{}.SetLo(v).SetHi(v)
	return archsimd.Int8x64{}.SetLo(h).SetHi(h)
}

// q4x4Dot is Σ q4·y of the four rows' blocks (lo, hi) with the activations
// (ylo, yhi), four int32 partial sums per row in its 128-bit lane.
func q4x4Dot(lo, hi archsimd.Uint8x64, ylo, yhi archsimd.Int8x64, ones archsimd.Int16x32) archsimd.Int32x16 {
	return lo.DotProductPairsSaturated(ylo).Add(hi.DotProductPairsSaturated(yhi)).DotProductPairs(ones)
}

// reduce8 sums the four lanes of each 128-bit lane of a (rows 0-3) and b
// (rows 4-7) into rows 0-7 of a 256-bit vector; idx is reduceIdx.
func reduce8(a, b archsimd.Int32x16, idx archsimd.Uint32x16) archsimd.Int32x8 {
	// Per 128-bit lane k: [a0+a2, b0+b2, a1+a3, b1+b3], then row k's sum in
	// element 0 and row k+4's in element 1.
	u := a.InterleaveLoGrouped(b).Add(a.InterleaveHiGrouped(b))
	u = u.Add(u.PermuteScalarsGrouped(2, 3, 0, 1))
	return u.Permute(idx).GetLo()
}

func q4Consts512() (m4 archsimd.Uint8x64, four archsimd.Uint32x16, ones archsimd.Int16x32, idx archsimd.Uint32x16) {
	return archsimd.BroadcastUint8x64(0x0f), archsimd.BroadcastUint32x16(4), archsimd.BroadcastInt16x32(1),
		archsimd.LoadUint32x16(&reduceIdx)
}

// q4_0Rows8Fused512 is q4_0Rows8FusedVec with AVX-512.
func q4_0Rows8Fused512(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int) (out [8]float32) {
	m4, four, ones, idx := q4Consts512()
	three := archsimd.BroadcastInt32x8(3)
	keep, expo, inf, scale := cpu.F16Consts()
	p0, p1, p2, p3, p4, p5, p6, p7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	var acc archsimd.Float32x8
	for j := 0; j < nb; j++ {
		o := 18*j + 2
		ylo, yhi := y4(y, 32*j), y4(y, 32*j+16)
		lo, hi := q4x4(p0, p1, p2, p3, o, m4, four)
		a := q4x4Dot(lo, hi, ylo, yhi, ones)
		lo, hi = q4x4(p4, p5, p6, p7, o, m4, four)
		b := q4x4Dot(lo, hi, ylo, yhi, ones)
		sy := archsimd.LoadInt32x4((*[4]int32)(unsafe.Add(s, 4*j))).Broadcast1To8().ShiftLeft(three)
		is := reduce8(a, b, idx).Sub(sy)
		da := scales8(p0, p1, p2, p3, p4, p5, p6, p7, o-2, keep, expo, inf, scale)
		db := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(d, 4*j))).Broadcast1To8()
		acc = acc.Add(is.ConvertToFloat32().Mul(da.Mul(db)))
	}
	acc.Store(&out)
	archsimd.ClearAVXUpperBits()
	return out
}

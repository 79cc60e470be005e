//go:build goexperiment.simd && amd64

package ops

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
	"unsafe"
)

// AVX-512 forms of the q8_0 and q4_0 reference quantizers
// (GOEXPERIMENT=simd on CPUs with AVX-512, checked once). Per block they do
// the float32 operations of quantizeBlockQ8_0 and quantizeBlockQ4_0, each
// exactly rounded, in vector lanes: max |x| (exact in any order), the
// scale d and its inverse by the same divisions, x·id by the same
// multiply, and the same rounding (half away from zero for q8_0, +8.5
// then truncation for q4_0); q4_0's signed maximum is the first element
// of largest magnitude, as in the scalar loop. So the bytes are identical
// (TestQuantizeVecMatchesScalar). Blocks holding a NaN or an infinity
// are quantized by the scalar code. The f16 scales are written by scalar
// code after VZEROUPPER (no F16C in archsimd), a chunk of blocks at a
// time, so no legacy-SSE instruction runs with dirty upper halves.

var vecQuant = archsimd.X86.AVX512()

const qVecChunk = 64

// quantQ8_0Vec quantizes len(src)/32 blocks of q8_0 into dst; it returns
// false (having written nothing) when the CPU lacks AVX-512.
func quantQ8_0Vec(src []float32, dst []byte) bool {
	return quantVec(src, dst, 34, q8_0ChunkVec, quantizeBlockQ8_0)
}

// quantQ4_0Vec is quantQ8_0Vec for q4_0.
func quantQ4_0Vec(src []float32, dst []byte) bool {
	return quantVec(src, dst, 18, q4_0ChunkVec, quantizeBlockQ4_0)
}

// quantVec runs a chunk kernel over src's 32-value blocks (blockBytes
// each in dst, an f16 scale first), qVecChunk blocks at a time; the
// blocks the kernel flags (NaN or Inf) go to the scalar quantizer.
func quantVec(src []float32, dst []byte, blockBytes int,
	chunk func(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 3]float32, bad *[qVecChunk]bool),
	scalar func(src []float32, dst []byte)) bool {
	if !vecQuant {
		return false
	}
	const qk = 32 // QK8_0 == QK4_0
	nb := len(src) / qk
	if len(dst) < nb*blockBytes {
		panic("ops: quantized destination too short")
	}
	var ds [qVecChunk + 3]float32 // each block stores 4 lanes
	var bad [qVecChunk]bool
	for c := 0; c < nb; c += qVecChunk {
		n := min(qVecChunk, nb-c)
		chunk(unsafe.Pointer(&src[c*qk]), unsafe.Pointer(&dst[c*blockBytes]), n, &ds, &bad)
		archsimd.ClearAVXUpperBits()
		for b := range n {
			if bad[b] {
				scalar(src[(c+b)*qk:(c+b+1)*qk], dst[(c+b)*blockBytes:(c+b+1)*blockBytes])
				continue
			}
			binary.LittleEndian.PutUint16(dst[(c+b)*blockBytes:], F32ToF16(ds[b]))
		}
	}
	return true
}

// quantConsts are the vectors both kernels use, built once per chunk.
type quantConsts struct {
	absMask         archsimd.Uint32x16
	p8, p4, p2, p1  archsimd.Uint32x16
	zeroIdx         archsimd.Uint32x16
	one, half, zero archsimd.Float32x16
	inf             archsimd.Float32x16
	onei, sh31      archsimd.Int32x16
	fifteen, sh4    archsimd.Int32x16
	c127, cm8, c8_5 archsimd.Float32x16
}

func newQuantConsts() quantConsts {
	idx := func(k uint32) archsimd.Uint32x16 {
		var a [16]uint32
		for i := range a {
			a[i] = uint32(i) ^ k
		}
		return archsimd.LoadUint32x16(&a)
	}
	bf := archsimd.BroadcastFloat32x16
	bi := archsimd.BroadcastInt32x16
	return quantConsts{
		absMask: archsimd.BroadcastUint32x16(0x7fffffff),
		p8:      idx(8), p4: idx(4), p2: idx(2), p1: idx(1),
		zeroIdx: archsimd.BroadcastUint32x16(0),
		one:     bf(1), half: bf(0.5), inf: bf(float32(math.Inf(1))),
		onei: bi(1), sh31: bi(31), fifteen: bi(15), sh4: bi(4),
		c127: bf(127), cm8: bf(-8), c8_5: bf(8.5),
	}
}

// allMax puts the maximum of m's lanes in every lane.
func allMax(m archsimd.Float32x16, p8, p4, p2, p1 archsimd.Uint32x16) archsimd.Float32x16 {
	m = m.Max(m.Permute(p8))
	m = m.Max(m.Permute(p4))
	m = m.Max(m.Permute(p2))
	return m.Max(m.Permute(p1))
}

// roundAway is C's roundf, lane by lane, for |p| < 2^31, as int32. (The
// constants are arguments: read through a pointer, they gave operand
// forms the Go 1.26 assembler rejects.)
func roundAway(p archsimd.Float32x16, absMask archsimd.Uint32x16, half archsimd.Float32x16, sh31, onei archsimd.Int32x16) archsimd.Int32x16 {
	t := p.ConvertToInt32() // truncation
	diff := p.Sub(t.ConvertToFloat32())
	ge := diff.AsUint32x16().And(absMask).AsFloat32x16().GreaterEqual(half)
	sgn := p.AsInt32x16().ShiftRight(sh31).Or(onei) // -1 or +1
	return t.Add(sgn.Masked(ge))
}

func q8_0ChunkVec(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 3]float32, bad *[qVecChunk]bool) {
	k := newQuantConsts()
	absMask, p8, p4, p2, p1 := k.absMask, k.p8, k.p4, k.p2, k.p1
	one, half, zero, inf := k.one, k.half, k.zero, k.inf
	onei, sh31, c127 := k.onei, k.sh31, k.c127
	for b := range n {
		x0 := archsimd.LoadFloat32x16((*[16]float32)(unsafe.Add(src, b*128)))
		x1 := archsimd.LoadFloat32x16((*[16]float32)(unsafe.Add(src, b*128+64)))
		a0 := x0.AsUint32x16().And(absMask).AsFloat32x16()
		a1 := x1.AsUint32x16().And(absMask).AsFloat32x16()
		m := allMax(a0.Max(a1), p8, p4, p2, p1)
		bad[b] = a0.IsNaN().Or(a1.IsNaN()).Or(m.Equal(inf)).ToBits() != 0
		d := m.Div(c127)
		id := one.Div(d).Masked(d.NotEqual(zero))
		d.GetLo().GetLo().Store((*[4]float32)(unsafe.Pointer(&ds[b])))
		q0 := roundAway(x0.Mul(id), absMask, half, sh31, onei).TruncateToInt8()
		q1 := roundAway(x1.Mul(id), absMask, half, sh31, onei).TruncateToInt8()
		q0.Store((*[16]int8)(unsafe.Add(dst, b*34+2)))
		q1.Store((*[16]int8)(unsafe.Add(dst, b*34+18)))
	}
}

func q4_0ChunkVec(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 3]float32, bad *[qVecChunk]bool) {
	k := newQuantConsts()
	absMask, p8, p4, p2, p1, zeroIdx := k.absMask, k.p8, k.p4, k.p2, k.p1, k.zeroIdx
	one, zero, inf := k.one, k.zero, k.inf
	fifteen, sh4, cm8, c8_5 := k.fifteen, k.sh4, k.cm8, k.c8_5
	for b := range n {
		x0 := archsimd.LoadFloat32x16((*[16]float32)(unsafe.Add(src, b*128)))
		x1 := archsimd.LoadFloat32x16((*[16]float32)(unsafe.Add(src, b*128+64)))
		a0 := x0.AsUint32x16().And(absMask).AsFloat32x16()
		a1 := x1.AsUint32x16().And(absMask).AsFloat32x16()
		m := allMax(a0.Max(a1), p8, p4, p2, p1)
		bad[b] = a0.IsNaN().Or(a1.IsNaN()).Or(m.Equal(inf)).ToBits() != 0
		// The signed value of the first element of largest magnitude.
		first := x1.Compress(a1.Equal(m))
		if lo := a0.Equal(m); lo.ToBits() != 0 {
			first = x0.Compress(lo)
		}
		// With all zeros the scalar loop keeps its initial +0.
		d := first.Permute(zeroIdx).Masked(m.NotEqual(zero)).Div(cm8)
		id := one.Div(d).Masked(d.NotEqual(zero))
		d.GetLo().GetLo().Store((*[4]float32)(unsafe.Pointer(&ds[b])))
		q0 := x0.Mul(id).Add(c8_5).ConvertToInt32().Min(fifteen)
		q1 := x1.Mul(id).Add(c8_5).ConvertToInt32().Min(fifteen)
		q0.Or(q1.ShiftLeft(sh4)).TruncateToInt8().Store((*[16]int8)(unsafe.Add(dst, b*18+2)))
	}
}

//go:build goexperiment.simd && amd64

package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops/half"
)

// AVX-512 and AVX2 forms of the q8_0 and q4_0 reference quantizers
// (GOEXPERIMENT=simd; the CPU is checked once). Per block they do the
// float32 operations of quantizeBlockQ8_0 and quantizeBlockQ4_0, each
// exactly rounded, in vector lanes: max |x| (exact in any order), the
// scale d and its inverse by the same divisions, x·id by the same
// multiply, and the same rounding (half away from zero for q8_0, +8.5
// then truncation for q4_0); q4_0's signed maximum is the first element
// of largest magnitude, as in the scalar loop; the integers are
// truncated to bytes, as the scalar conversions do. So the bytes are
// identical (TestQuantizeVecMatchesScalar runs every kernel the CPU has).
// Blocks holding a NaN or an infinity, and q8_0 blocks whose 1/d
// overflows (d subnormal), are quantized by the scalar code. The f16
// scales are written by scalar code after VZEROUPPER (no F16C in
// archsimd), a chunk of blocks at a time, so no legacy-SSE instruction
// runs with dirty upper halves.

// quantKernels lists the kernels this CPU runs, by their float32 lanes,
// widest first: 16 (AVX-512), 8 (AVX2), ending with 0 (the scalar
// code); the first is this CPU's (quantLanes), tests run each.
func quantKernels() []int {
	var k []int
	if archsimd.X86.AVX512() {
		k = append(k, 16)
	}
	if archsimd.X86.AVX2() {
		k = append(k, 8)
	}
	return append(k, 0)
}

const qVecChunk = 64

// quantQ8_0Vec quantizes len(src)/32 blocks of q8_0 into dst by the
// kernel of lanes; it returns false (having written nothing) for 0.
func quantQ8_0Vec(lanes int, src []float32, dst []byte) bool {
	if lanes == 0 {
		return false
	}
	quantVec(lanes, src, dst, false)
	return true
}

// quantQ4_0Vec is quantQ8_0Vec for q4_0.
func quantQ4_0Vec(lanes int, src []float32, dst []byte) bool {
	if lanes == 0 {
		return false
	}
	quantVec(lanes, src, dst, true)
	return true
}

// quantVec runs the chunk kernel of q8_0 (or q4_0, q4) and lanes
// over src's 32-value blocks (an f16 scale first in each), qVecChunk
// blocks at a time; the blocks the kernel flags go to the scalar
// quantizer. (Direct calls, not function values: with those ds and bad
// escaped to the heap, two allocations per row.)
func quantVec(lanes int, src []float32, dst []byte, q4 bool) {
	const qk = 32 // QK8_0 == QK4_0
	blockBytes, scalar := 34, QuantizeBlockQ8_0
	if q4 {
		blockBytes, scalar = 18, quantizeBlockQ4_0
	}
	nb := len(src) / qk
	if len(dst) < nb*blockBytes {
		panic("ops: quantized destination too short")
	}
	var ds [qVecChunk + 7]float32 // each block stores 4 (AVX-512) or 8 (AVX2) lanes
	var bad [qVecChunk]bool
	for c := 0; c < nb; c += qVecChunk {
		n := min(qVecChunk, nb-c)
		ps, pd := unsafe.Pointer(&src[c*qk]), unsafe.Pointer(&dst[c*blockBytes])
		switch {
		case !q4 && lanes == 16:
			q8_0ChunkVec(ps, pd, n, &ds, &bad)
		case !q4:
			q8_0ChunkAVX2(ps, pd, n, &ds, &bad)
		case lanes == 16:
			q4_0ChunkVec(ps, pd, n, &ds, &bad)
		default:
			q4_0ChunkAVX2(ps, pd, n, &ds, &bad)
		}
		archsimd.ClearAVXUpperBits()
		for b := range n {
			if bad[b] {
				scalar(src[(c+b)*qk:(c+b+1)*qk], dst[(c+b)*blockBytes:(c+b+1)*blockBytes])
				continue
			}
			binary.LittleEndian.PutUint16(dst[(c+b)*blockBytes:], half.FromF32(ds[b]))
		}
	}
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

func q8_0ChunkVec(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 7]float32, bad *[qVecChunk]bool) {
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
		d := m.Div(c127)
		id := one.Div(d).Masked(d.NotEqual(zero))
		bad[b] = a0.IsNaN().Or(a1.IsNaN()).Or(m.Equal(inf)).Or(id.Equal(inf)).ToBits() != 0
		d.GetLo().GetLo().Store((*[4]float32)(unsafe.Pointer(&ds[b])))
		q0 := roundAway(x0.Mul(id), absMask, half, sh31, onei).TruncateToInt8()
		q1 := roundAway(x1.Mul(id), absMask, half, sh31, onei).TruncateToInt8()
		q0.Store((*[16]int8)(unsafe.Add(dst, b*34+2)))
		q1.Store((*[16]int8)(unsafe.Add(dst, b*34+18)))
	}
}

func q4_0ChunkVec(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 7]float32, bad *[qVecChunk]bool) {
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

// The AVX2 kernels: a block is four Float32x8. |x| is taken on the bits,
// whose int32 order is the float order for non-negative values (NaN
// above +Inf), so one integer maximum gives max |x| and flags NaN and
// Inf. Bytes are packed by VPSHUFB (the low byte of each int32 lane, so
// truncated, as the scalar conversions) and VPERMD.

// The AVX2 kernels' vector constants, as plain arrays (no vector code
// runs at package initialization) loaded with VEX loads: building them
// in arrays or a struct inside the kernels compiled to legacy-SSE
// moves, which run with dirty upper halves.
var (
	avx2Xor4 = xorIdx8(4)
	avx2Xor2 = xorIdx8(2)
	avx2Xor1 = xorIdx8(1)
	// avx2Interleave orders the dwords of two 128-bit groups: 0, 4, 1, 5, ...
	avx2Interleave = [8]uint32{0, 4, 1, 5, 2, 6, 3, 7}
	// avx2Pack[i] moves bytes 0, 4, 8, 12 (the low bytes of the int32s) of
	// each 128-bit group to bytes 4i..4i+3 and zeroes the others.
	avx2Pack = func() (p [4][32]int8) {
		for i := range p {
			for j := range p[i] {
				p[i][j] = -1
			}
			for g := 0; g < 32; g += 16 {
				for k := range 4 {
					p[i][g+4*i+k] = int8(4 * k)
				}
			}
		}
		return
	}()
)

func xorIdx8(k uint32) (a [8]uint32) {
	for i := range a {
		a[i] = uint32(i) ^ k
	}
	return
}

// allMaxI32 puts the maximum of m's lanes in every lane.
func allMaxI32(m archsimd.Int32x8, p4, p2, p1 archsimd.Uint32x8) archsimd.Int32x8 {
	m = m.Max(m.Permute(p4))
	m = m.Max(m.Permute(p2))
	return m.Max(m.Permute(p1))
}

// roundAway8 is roundAway for eight lanes.
func roundAway8(p archsimd.Float32x8, absMask archsimd.Int32x8, half archsimd.Float32x8, sh31, onei archsimd.Int32x8) archsimd.Int32x8 {
	t := p.ConvertToInt32() // truncation
	diff := p.Sub(t.ConvertToFloat32())
	ge := diff.AsInt32x8().And(absMask).AsFloat32x8().GreaterEqual(half)
	sgn := p.AsInt32x8().ShiftRight(sh31).Or(onei) // -1 or +1
	return t.Add(sgn.Masked(ge))
}

func q8_0ChunkAVX2(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 7]float32, bad *[qVecChunk]bool) {
	bf, bi := archsimd.BroadcastFloat32x8, archsimd.BroadcastInt32x8
	absMask, maxFinite := bi(0x7fffffff), bi(0x7f7fffff)
	p4, p2, p1 := archsimd.LoadUint32x8(&avx2Xor4), archsimd.LoadUint32x8(&avx2Xor2), archsimd.LoadUint32x8(&avx2Xor1)
	interlv := archsimd.LoadUint32x8(&avx2Interleave)
	pk0, pk1 := archsimd.LoadInt8x32(&avx2Pack[0]), archsimd.LoadInt8x32(&avx2Pack[1])
	pk2, pk3 := archsimd.LoadInt8x32(&avx2Pack[2]), archsimd.LoadInt8x32(&avx2Pack[3])
	one, half, inf := bf(1), bf(0.5), bf(float32(math.Inf(1)))
	var zero archsimd.Float32x8
	onei, sh31, c127 := bi(1), bi(31), bf(127)
	for b := range n {
		p := unsafe.Add(src, b*128)
		x0 := archsimd.LoadFloat32x8((*[8]float32)(p))
		x1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 32)))
		x2 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 64)))
		x3 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 96)))
		a0, a1 := x0.AsInt32x8().And(absMask), x1.AsInt32x8().And(absMask)
		a2, a3 := x2.AsInt32x8().And(absMask), x3.AsInt32x8().And(absMask)
		mi := allMaxI32(a0.Max(a1).Max(a2.Max(a3)), p4, p2, p1)
		m := mi.AsFloat32x8()
		d := m.Div(c127)
		id := one.Div(d).Masked(d.NotEqual(zero))
		bad[b] = mi.Greater(maxFinite).Or(id.Equal(inf)).ToBits() != 0
		d.Store((*[8]float32)(unsafe.Pointer(&ds[b])))
		q0 := roundAway8(x0.Mul(id), absMask, half, sh31, onei).AsInt8x32().PermuteOrZeroGrouped(pk0)
		q1 := roundAway8(x1.Mul(id), absMask, half, sh31, onei).AsInt8x32().PermuteOrZeroGrouped(pk1)
		q2 := roundAway8(x2.Mul(id), absMask, half, sh31, onei).AsInt8x32().PermuteOrZeroGrouped(pk2)
		q3 := roundAway8(x3.Mul(id), absMask, half, sh31, onei).AsInt8x32().PermuteOrZeroGrouped(pk3)
		q := q0.Or(q1).Or(q2.Or(q3)).AsInt32x8().Permute(interlv)
		q.AsInt8x32().Store((*[32]int8)(unsafe.Add(dst, b*34+2)))
	}
}

func q4_0ChunkAVX2(src, dst unsafe.Pointer, n int, ds *[qVecChunk + 7]float32, bad *[qVecChunk]bool) {
	bf, bi := archsimd.BroadcastFloat32x8, archsimd.BroadcastInt32x8
	absMask, maxFinite := bi(0x7fffffff), bi(0x7f7fffff)
	p4, p2, p1 := archsimd.LoadUint32x8(&avx2Xor4), archsimd.LoadUint32x8(&avx2Xor2), archsimd.LoadUint32x8(&avx2Xor1)
	interlv := archsimd.LoadUint32x8(&avx2Interleave)
	pk0, pk1 := archsimd.LoadInt8x32(&avx2Pack[0]), archsimd.LoadInt8x32(&avx2Pack[1])
	one := bf(1)
	var zero archsimd.Float32x8
	sh4, c15, cm8, c8_5 := bi(4), bi(15), bf(-8), bf(8.5)
	for b := range n {
		p := unsafe.Add(src, b*128)
		x0 := archsimd.LoadFloat32x8((*[8]float32)(p))
		x1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 32)))
		x2 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 64)))
		x3 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 96)))
		a0, a1 := x0.AsInt32x8().And(absMask), x1.AsInt32x8().And(absMask)
		a2, a3 := x2.AsInt32x8().And(absMask), x3.AsInt32x8().And(absMask)
		mi := allMaxI32(a0.Max(a1).Max(a2.Max(a3)), p4, p2, p1)
		bad[b] = mi.Greater(maxFinite).ToBits() != 0
		// The signed value of the first element of largest magnitude,
		// read as bits (no scalar float instruction) and broadcast.
		eq := uint32(a0.Equal(mi).ToBits()) | uint32(a1.Equal(mi).ToBits())<<8 |
			uint32(a2.Equal(mi).ToBits())<<16 | uint32(a3.Equal(mi).ToBits())<<24
		j := bits.TrailingZeros32(eq) & 31
		first := archsimd.BroadcastUint32x8(*(*uint32)(unsafe.Add(p, 4*j))).AsFloat32x8()
		// With all zeros the scalar loop keeps its initial +0.
		m := mi.AsFloat32x8()
		d := first.Masked(m.NotEqual(zero)).Div(cm8)
		id := one.Div(d).Masked(d.NotEqual(zero))
		d.Store((*[8]float32)(unsafe.Pointer(&ds[b])))
		q0 := x0.Mul(id).Add(c8_5).ConvertToInt32().Min(c15)
		q1 := x1.Mul(id).Add(c8_5).ConvertToInt32().Min(c15)
		q2 := x2.Mul(id).Add(c8_5).ConvertToInt32().Min(c15)
		q3 := x3.Mul(id).Add(c8_5).ConvertToInt32().Min(c15)
		lo := q0.Or(q2.ShiftLeft(sh4)).AsInt8x32().PermuteOrZeroGrouped(pk0) // bytes 0..7
		hi := q1.Or(q3.ShiftLeft(sh4)).AsInt8x32().PermuteOrZeroGrouped(pk1) // bytes 8..15
		q := lo.Or(hi).AsInt32x8().Permute(interlv)
		q.AsInt8x32().GetLo().Store((*[16]int8)(unsafe.Add(dst, b*18+2)))
	}
}

//go:build goexperiment.simd && amd64

package mulmat

import (
	"encoding/binary"
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// The vector kernels of MulMat, built only with GOEXPERIMENT=simd on amd64
// and used when the CPU has AVX2 (checked at run time, per call). They
// compute exactly what the scalar kernels in mulmat.go compute:
//
//   - q8_0 and q4_0: each block's integer dot product is an exact integer
//     (VPMADDUBSW cannot saturate here, see below), then scaled and
//     summed over blocks in the same order with the same float32
//     operations, so results are bit-identical to the scalar path.
//   - f32 and f16, one column: eight running sums, lane j summing the
//     elements i ≡ j (mod 8) with a separate multiply and add (no FMA),
//     the tail added to lane 0, then ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)):
//     the order of dotF32 and dotF16Bytes, so bit-identical too.
//   - f32 and f16, four columns at once: the same eight-lane order per
//     column, which differs from the scalar four-column kernels (two
//     running sums per column), so those results may differ in the last
//     bits between builds.

// hsum8 is the sum of the eight int32 lanes of v.
func hsum8(v archsimd.Int32x8) int32 {
	h := v.GetLo().Add(v.GetHi())
	h = h.AddPairs(h)
	h = h.AddPairs(h)
	return h.GetElem(0)
}

// The quantized kernels work in chunks of vecChunk blocks: first the
// integer dot products of the chunk's blocks with vector instructions,
// then, after VZEROUPPER, the float32 scaling and summation in scalar
// code exactly as in the scalar kernels. (Scalar SSE float instructions
// interleaved with 256-bit ones are an order of magnitude slower on some
// CPUs, without the VZEROUPPER in between.)
const vecChunk = 64

// hsum8x8 returns the lane sums of p0..p7, in order, as one vector.
func hsum8x8(p0, p1, p2, p3, p4, p5, p6, p7 archsimd.Int32x8) archsimd.Int32x8 {
	// Within each 128-bit half, pairwise sums: [p0 p1 p2 p3] partial sums
	// in the low half from lanes 0-3, in the high half from lanes 4-7.
	a := p0.AddPairsGrouped(p1).AddPairsGrouped(p2.AddPairsGrouped(p3))
	b := p4.AddPairsGrouped(p5).AddPairsGrouped(p6.AddPairsGrouped(p7))
	return a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b))
}

// q8_0Dot is the integer dot product of the q8_0 block at x (its 32
// quants at x+2) with the 32 int8 activations at y: Σ x·y = Σ |x|·(y·sign
// x), by VPMADDUBSW (|x| ≤ 128 unsigned, |y| ≤ 127, so each pair sum is at
// most 2·128·127 = 32512 and never saturates) and VPMADDWD against ones,
// in eight int32 lanes.
func q8_0Dot(x, y unsafe.Pointer, ones archsimd.Int16x16) archsimd.Int32x8 {
	w := cpu.LoadI8x32(x, 2)
	return w.Abs().AsUint8x32().DotProductPairsSaturated(cpu.LoadI8x32(y, 0).CopySign(w)).DotProductPairs(ones)
}

// quantChunk holds one chunk's per-block results: the integer dot
// products, the weight scales (f16 bits) and, for the first whole groups
// of eight blocks, the scaled products float32(isum)·float32(da·db).
type quantChunk struct {
	isum [vecChunk]int32
	sc   [vecChunk]uint16
	p    [vecChunk]float32
}

// scale8 sets c.p[j:j+8] to float32(isum)·float32(da·db) for blocks j to
// j+7 (db from d, indexed from 0 at block j): the operations of the scalar
// kernels, lane by lane, so the same float32 values.
func (c *quantChunk) scale8(j int, pd unsafe.Pointer, keep, expo, inf archsimd.Int32x8, scale archsimd.Float32x8) {
	da := cpu.WidenF16x8(unsafe.Pointer(&c.sc[j]), 0, keep, expo, inf, scale)
	t := da.Mul(cpu.LoadF32x8(pd, 0))
	archsimd.LoadInt32x8((*[8]int32)(c.isum[j : j+8])).ConvertToFloat32().Mul(t).Store((*[8]float32)(c.p[j : j+8]))
}

// scales8 copies the f16 scales of the eight blocks of size bsz at x, the
// first being block j, to c.sc[j:j+8].
func (c *quantChunk) scales8(j int, x unsafe.Pointer, bsz int) {
	sc := (*[8]uint16)(c.sc[j : j+8])
	for i := range sc {
		sc[i] = *(*uint16)(unsafe.Add(x, i*bsz))
	}
}

// finish computes c.p for the blocks from j on in scalar code, after the
// vector kernel has run and cleared the upper halves of the vector
// registers.
func (c *quantChunk) finish(j int, d []float32) {
	tab := ops.F16ToF32Table()
	for ; j < len(d); j++ {
		c.p[j] = float32(float32(c.isum[j]) * float32(tab[c.sc[j]]*d[j]))
	}
}

// q8_0Chunk fills c for the len(d) ≤ vecChunk q8_0 blocks of a against
// the int8 activations q with scales d, returning how many products it
// computed (the rest are left to finish).
func q8_0Chunk(c *quantChunk, a []byte, q []int8, d []float32) int {
	nb := len(d)
	if nb == 0 {
		return 0
	}
	a = a[:nb*34]
	q = q[:nb*32]
	pa, pq := unsafe.Pointer(&a[0]), unsafe.Pointer(&q[0])
	ones := archsimd.BroadcastInt16x16(1)
	blk := 0
	for ; blk+8 <= nb; blk += 8 {
		x, y := unsafe.Add(pa, 34*blk), unsafe.Add(pq, 32*blk)
		c.scales8(blk, x, 34)
		hsum8x8(q8_0Dot(x, y, ones), q8_0Dot(unsafe.Add(x, 34), unsafe.Add(y, 32), ones),
			q8_0Dot(unsafe.Add(x, 68), unsafe.Add(y, 64), ones), q8_0Dot(unsafe.Add(x, 102), unsafe.Add(y, 96), ones),
			q8_0Dot(unsafe.Add(x, 136), unsafe.Add(y, 128), ones), q8_0Dot(unsafe.Add(x, 170), unsafe.Add(y, 160), ones),
			q8_0Dot(unsafe.Add(x, 204), unsafe.Add(y, 192), ones), q8_0Dot(unsafe.Add(x, 238), unsafe.Add(y, 224), ones),
		).Store((*[8]int32)(c.isum[blk : blk+8]))
	}
	for ; blk < nb; blk++ {
		c.isum[blk] = hsum8(q8_0Dot(unsafe.Add(pa, 34*blk), unsafe.Add(pq, 32*blk), ones))
		c.sc[blk] = binary.LittleEndian.Uint16(a[34*blk:])
	}
	keep, expo, inf, scale := cpu.F16Consts()
	pd := unsafe.Pointer(&d[0])
	j := 0
	for ; j+8 <= nb; j += 8 {
		c.scale8(j, unsafe.Add(pd, 4*j), keep, expo, inf, scale)
	}
	return j
}

// q4_0Dot is Σ q4·y over the q4_0 block at x (its 16 bytes of nibbles at
// x+2) and the 32 int8 activations at y, by VPMADDUBSW (q4 ≤ 15, no
// saturation), in eight int32 lanes. Byte j holds element j in its low
// nibble and j+16 in its high nibble.
func q4_0Dot(x, y unsafe.Pointer, ones archsimd.Int16x16, m4 archsimd.Uint8x16, four archsimd.Uint32x4) archsimd.Int32x8 {
	b := cpu.LoadU8x16(x, 2)
	// A per-lane shift: the constant-count form loads its count with a
	// legacy SSE instruction (see vecChunk).
	hi := b.AsUint32x4().ShiftRight(four).AsUint8x16().And(m4)
	w := archsimd.Uint8x32{}.SetLo(b.And(m4)).SetHi(hi)
	return w.DotProductPairsSaturated(cpu.LoadI8x32(y, 0)).DotProductPairs(ones)
}

// q4_0Chunk is q8_0Chunk for q4_0 weights, whose integer dot products
// are Σ q4·y − 8·Σy, with Σy from s.
func q4_0Chunk(c *quantChunk, a []byte, q []int8, d []float32, s []int32) int {
	nb := len(d)
	if nb == 0 {
		return 0
	}
	a = a[:nb*18]
	q = q[:nb*32]
	s = s[:nb]
	pa, pq := unsafe.Pointer(&a[0]), unsafe.Pointer(&q[0])
	ones := archsimd.BroadcastInt16x16(1)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	four := archsimd.BroadcastUint32x4(4)
	blk := 0
	for ; blk+8 <= nb; blk += 8 {
		x, y := unsafe.Add(pa, 18*blk), unsafe.Add(pq, 32*blk)
		c.scales8(blk, x, 18)
		sum := hsum8x8(q4_0Dot(x, y, ones, m4, four), q4_0Dot(unsafe.Add(x, 18), unsafe.Add(y, 32), ones, m4, four),
			q4_0Dot(unsafe.Add(x, 36), unsafe.Add(y, 64), ones, m4, four), q4_0Dot(unsafe.Add(x, 54), unsafe.Add(y, 96), ones, m4, four),
			q4_0Dot(unsafe.Add(x, 72), unsafe.Add(y, 128), ones, m4, four), q4_0Dot(unsafe.Add(x, 90), unsafe.Add(y, 160), ones, m4, four),
			q4_0Dot(unsafe.Add(x, 108), unsafe.Add(y, 192), ones, m4, four), q4_0Dot(unsafe.Add(x, 126), unsafe.Add(y, 224), ones, m4, four))
		sy := archsimd.LoadInt32x8((*[8]int32)(s[blk : blk+8]))
		sum.Sub(sy.ShiftAllLeft(3)).Store((*[8]int32)(c.isum[blk : blk+8]))
	}
	for ; blk < nb; blk++ {
		c.isum[blk] = hsum8(q4_0Dot(unsafe.Add(pa, 18*blk), unsafe.Add(pq, 32*blk), ones, m4, four)) - 8*s[blk]
		c.sc[blk] = binary.LittleEndian.Uint16(a[18*blk:])
	}
	keep, expo, inf, scale := cpu.F16Consts()
	pd := unsafe.Pointer(&d[0])
	j := 0
	for ; j+8 <= nb; j += 8 {
		c.scale8(j, unsafe.Add(pd, 4*j), keep, expo, inf, scale)
	}
	return j
}

// dotQ8_0Vec is dotQ8_0 on plain int8 activations q.
func dotQ8_0Vec(a []byte, q []int8, d []float32) float32 {
	nb := len(d)
	a = a[:nb*34]
	q = q[:nb*32]
	var c quantChunk
	var sum float32
	for b0 := 0; b0 < nb; b0 += vecChunk {
		dc := d[b0:min(nb, b0+vecChunk)]
		j := q8_0Chunk(&c, a[b0*34:], q[b0*32:], dc)
		archsimd.ClearAVXUpperBits()
		c.finish(j, dc)
		for _, p := range c.p[:len(dc)] {
			sum += p
		}
	}
	return sum
}

// dotQ8_0Vec4R is dotQ8_0Vec of four weight rows with the same
// activations, the four float sums interleaved.
func dotQ8_0Vec4R(a0, a1, a2, a3 []byte, q []int8, d []float32) [4]float32 {
	nb := len(d)
	a0, a1, a2, a3 = a0[:nb*34], a1[:nb*34], a2[:nb*34], a3[:nb*34]
	q = q[:nb*32]
	var c0, c1, c2, c3 quantChunk
	var s0, s1, s2, s3 float32
	for b0 := 0; b0 < nb; b0 += vecChunk {
		dc := d[b0:min(nb, b0+vecChunk)]
		y := q[b0*32:]
		j0 := q8_0Chunk(&c0, a0[b0*34:], y, dc)
		j1 := q8_0Chunk(&c1, a1[b0*34:], y, dc)
		j2 := q8_0Chunk(&c2, a2[b0*34:], y, dc)
		j3 := q8_0Chunk(&c3, a3[b0*34:], y, dc)
		archsimd.ClearAVXUpperBits()
		c0.finish(j0, dc)
		c1.finish(j1, dc)
		c2.finish(j2, dc)
		c3.finish(j3, dc)
		for j := range dc {
			s0 += c0.p[j]
			s1 += c1.p[j]
			s2 += c2.p[j]
			s3 += c3.p[j]
		}
	}
	return [4]float32{s0, s1, s2, s3}
}

// dotQ4_0Vec is dotQ4_0 on plain int8 activations q.
func dotQ4_0Vec(a []byte, q []int8, d []float32, s []int32) float32 {
	nb := len(d)
	a = a[:nb*18]
	q = q[:nb*32]
	s = s[:nb]
	var c quantChunk
	var sum float32
	for b0 := 0; b0 < nb; b0 += vecChunk {
		b1 := min(nb, b0+vecChunk)
		dc := d[b0:b1]
		j := q4_0Chunk(&c, a[b0*18:], q[b0*32:], dc, s[b0:b1])
		archsimd.ClearAVXUpperBits()
		c.finish(j, dc)
		for _, p := range c.p[:len(dc)] {
			sum += p
		}
	}
	return sum
}

// dotQ4_0Vec4R is dotQ4_0Vec of four weight rows with the same
// activations, the four float sums interleaved.
func dotQ4_0Vec4R(a0, a1, a2, a3 []byte, q []int8, d []float32, s []int32) [4]float32 {
	nb := len(d)
	a0, a1, a2, a3 = a0[:nb*18], a1[:nb*18], a2[:nb*18], a3[:nb*18]
	q = q[:nb*32]
	s = s[:nb]
	var c0, c1, c2, c3 quantChunk
	var s0, s1, s2, s3 float32
	for b0 := 0; b0 < nb; b0 += vecChunk {
		b1 := min(nb, b0+vecChunk)
		dc, sc := d[b0:b1], s[b0:b1]
		y := q[b0*32:]
		j0 := q4_0Chunk(&c0, a0[b0*18:], y, dc, sc)
		j1 := q4_0Chunk(&c1, a1[b0*18:], y, dc, sc)
		j2 := q4_0Chunk(&c2, a2[b0*18:], y, dc, sc)
		j3 := q4_0Chunk(&c3, a3[b0*18:], y, dc, sc)
		archsimd.ClearAVXUpperBits()
		c0.finish(j0, dc)
		c1.finish(j1, dc)
		c2.finish(j2, dc)
		c3.finish(j3, dc)
		for j := range dc {
			s0 += c0.p[j]
			s1 += c1.p[j]
			s2 += c2.p[j]
			s3 += c3.p[j]
		}
	}
	return [4]float32{s0, s1, s2, s3}
}

// The float kernels keep, per dot product, eight running sums in one
// Float32x8, lane j summing the elements i ≡ j (mod 8) with a multiply
// and a separate add; the tail goes to lane 0 and the lanes are reduced
// as in dotF32. One such sum is one dependent chain of adds, so the
// kernels compute four dot products at once: four weight rows against
// one activation row (4R), or one weight row against four activation
// rows (4C).

// dotF32Vec is dotF32Bytes.
func dotF32Vec(a []byte, b []float32) float32 {
	n := len(b)
	a = a[:4*n]
	var acc archsimd.Float32x8
	i := 0
	if n >= 8 {
		pa, pb := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0])
		for ; i+8 <= n; i += 8 {
			acc = acc.Add(cpu.LoadF32x8(pa, 4*i).Mul(cpu.LoadF32x8(pb, 4*i)))
		}
	}
	var s [8]float32
	acc.Store(&s)
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		s[0] += float32(cpu.F32At(a, i) * b[i])
	}
	return cpu.Finish8(&s)
}

// dotF32Vec4R is dotF32Vec of four weight rows against b.
func dotF32Vec4R(a0, a1, a2, a3 []byte, b []float32) [4]float32 {
	n := len(b)
	a0, a1, a2, a3 = a0[:4*n], a1[:4*n], a2[:4*n], a3[:4*n]
	var c0, c1, c2, c3 archsimd.Float32x8
	i := 0
	if n >= 8 {
		p0, p1, p2, p3 := unsafe.Pointer(&a0[0]), unsafe.Pointer(&a1[0]), unsafe.Pointer(&a2[0]), unsafe.Pointer(&a3[0])
		pb := unsafe.Pointer(&b[0])
		for ; i+8 <= n; i += 8 {
			o := 4 * i
			y := cpu.LoadF32x8(pb, o)
			c0 = c0.Add(cpu.LoadF32x8(p0, o).Mul(y))
			c1 = c1.Add(cpu.LoadF32x8(p1, o).Mul(y))
			c2 = c2.Add(cpu.LoadF32x8(p2, o).Mul(y))
			c3 = c3.Add(cpu.LoadF32x8(p3, o).Mul(y))
		}
	}
	var s [4][8]float32
	c0.Store(&s[0])
	c1.Store(&s[1])
	c2.Store(&s[2])
	c3.Store(&s[3])
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		s[0][0] += float32(cpu.F32At(a0, i) * b[i])
		s[1][0] += float32(cpu.F32At(a1, i) * b[i])
		s[2][0] += float32(cpu.F32At(a2, i) * b[i])
		s[3][0] += float32(cpu.F32At(a3, i) * b[i])
	}
	return [4]float32{cpu.Finish8(&s[0]), cpu.Finish8(&s[1]), cpu.Finish8(&s[2]), cpu.Finish8(&s[3])}
}

// dotF32Vec4C is dotF32Vec of one weight row against the four activation
// rows stored one after the other in b (len(b) = 4k).
func dotF32Vec4C(a []byte, b []float32) [4]float32 {
	n := len(b) / 4
	a = a[:4*n]
	b0, b1, b2, b3 := b[:n:n], b[n:2*n:2*n], b[2*n:3*n:3*n], b[3*n:4*n:4*n]
	var c0, c1, c2, c3 archsimd.Float32x8
	i := 0
	if n >= 8 {
		pa := unsafe.Pointer(&a[0])
		p0, p1, p2, p3 := unsafe.Pointer(&b0[0]), unsafe.Pointer(&b1[0]), unsafe.Pointer(&b2[0]), unsafe.Pointer(&b3[0])
		for ; i+8 <= n; i += 8 {
			o := 4 * i
			x := cpu.LoadF32x8(pa, o)
			c0 = c0.Add(x.Mul(cpu.LoadF32x8(p0, o)))
			c1 = c1.Add(x.Mul(cpu.LoadF32x8(p1, o)))
			c2 = c2.Add(x.Mul(cpu.LoadF32x8(p2, o)))
			c3 = c3.Add(x.Mul(cpu.LoadF32x8(p3, o)))
		}
	}
	var s [4][8]float32
	c0.Store(&s[0])
	c1.Store(&s[1])
	c2.Store(&s[2])
	c3.Store(&s[3])
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		x := cpu.F32At(a, i)
		s[0][0] += float32(x * b0[i])
		s[1][0] += float32(x * b1[i])
		s[2][0] += float32(x * b2[i])
		s[3][0] += float32(x * b3[i])
	}
	return [4]float32{cpu.Finish8(&s[0]), cpu.Finish8(&s[1]), cpu.Finish8(&s[2]), cpu.Finish8(&s[3])}
}

// dotF16Vec is dotF16Bytes.
func dotF16Vec(a []byte, b []float32) float32 {
	n := len(b)
	a = a[:2*n]
	var acc archsimd.Float32x8
	i := 0
	if n >= 8 {
		keep, expo, inf, scale := cpu.F16Consts()
		pa, pb := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0])
		for ; i+8 <= n; i += 8 {
			acc = acc.Add(cpu.WidenF16x8(pa, 2*i, keep, expo, inf, scale).Mul(cpu.LoadF32x8(pb, 4*i)))
		}
	}
	var s [8]float32
	acc.Store(&s)
	archsimd.ClearAVXUpperBits()
	tab := ops.F16ToF32Table()
	for ; i < n; i++ {
		s[0] += float32(tab[binary.LittleEndian.Uint16(a[2*i:])] * b[i])
	}
	return cpu.Finish8(&s)
}

// dotF16Vec4R is dotF16Vec of four weight rows against b.
func (ks *Kernels) dotF16Vec4R(a0, a1, a2, a3 []byte, b []float32) [4]float32 {
	if ks.F16Dot {
		return dotF16F16C4R(a0, a1, a2, a3, b)
	}
	n := len(b)
	a0, a1, a2, a3 = a0[:2*n], a1[:2*n], a2[:2*n], a3[:2*n]
	var c0, c1, c2, c3 archsimd.Float32x8
	i := 0
	if n >= 8 {
		keep, expo, inf, scale := cpu.F16Consts()
		p0, p1, p2, p3 := unsafe.Pointer(&a0[0]), unsafe.Pointer(&a1[0]), unsafe.Pointer(&a2[0]), unsafe.Pointer(&a3[0])
		pb := unsafe.Pointer(&b[0])
		for ; i+8 <= n; i += 8 {
			o := 2 * i
			y := cpu.LoadF32x8(pb, 4*i)
			c0 = c0.Add(cpu.WidenF16x8(p0, o, keep, expo, inf, scale).Mul(y))
			c1 = c1.Add(cpu.WidenF16x8(p1, o, keep, expo, inf, scale).Mul(y))
			c2 = c2.Add(cpu.WidenF16x8(p2, o, keep, expo, inf, scale).Mul(y))
			c3 = c3.Add(cpu.WidenF16x8(p3, o, keep, expo, inf, scale).Mul(y))
		}
	}
	var s [4][8]float32
	c0.Store(&s[0])
	c1.Store(&s[1])
	c2.Store(&s[2])
	c3.Store(&s[3])
	archsimd.ClearAVXUpperBits()
	tab := ops.F16ToF32Table()
	for ; i < n; i++ {
		s[0][0] += float32(tab[binary.LittleEndian.Uint16(a0[2*i:])] * b[i])
		s[1][0] += float32(tab[binary.LittleEndian.Uint16(a1[2*i:])] * b[i])
		s[2][0] += float32(tab[binary.LittleEndian.Uint16(a2[2*i:])] * b[i])
		s[3][0] += float32(tab[binary.LittleEndian.Uint16(a3[2*i:])] * b[i])
	}
	return [4]float32{cpu.Finish8(&s[0]), cpu.Finish8(&s[1]), cpu.Finish8(&s[2]), cpu.Finish8(&s[3])}
}

// dotF16Vec4C is dotF16Vec of one weight row against the four activation
// rows stored one after the other in b (len(b) = 4k).
func dotF16Vec4C(a []byte, b []float32) [4]float32 {
	n := len(b) / 4
	a = a[:2*n]
	b0, b1, b2, b3 := b[:n:n], b[n:2*n:2*n], b[2*n:3*n:3*n], b[3*n:4*n:4*n]
	var c0, c1, c2, c3 archsimd.Float32x8
	i := 0
	if n >= 8 {
		keep, expo, inf, scale := cpu.F16Consts()
		pa := unsafe.Pointer(&a[0])
		p0, p1, p2, p3 := unsafe.Pointer(&b0[0]), unsafe.Pointer(&b1[0]), unsafe.Pointer(&b2[0]), unsafe.Pointer(&b3[0])
		for ; i+8 <= n; i += 8 {
			o := 4 * i
			x := cpu.WidenF16x8(pa, 2*i, keep, expo, inf, scale)
			c0 = c0.Add(x.Mul(cpu.LoadF32x8(p0, o)))
			c1 = c1.Add(x.Mul(cpu.LoadF32x8(p1, o)))
			c2 = c2.Add(x.Mul(cpu.LoadF32x8(p2, o)))
			c3 = c3.Add(x.Mul(cpu.LoadF32x8(p3, o)))
		}
	}
	var s [4][8]float32
	c0.Store(&s[0])
	c1.Store(&s[1])
	c2.Store(&s[2])
	c3.Store(&s[3])
	archsimd.ClearAVXUpperBits()
	tab := ops.F16ToF32Table()
	for ; i < n; i++ {
		x := tab[binary.LittleEndian.Uint16(a[2*i:])]
		s[0][0] += float32(x * b0[i])
		s[1][0] += float32(x * b1[i])
		s[2][0] += float32(x * b2[i])
		s[3][0] += float32(x * b3[i])
	}
	return [4]float32{cpu.Finish8(&s[0]), cpu.Finish8(&s[1]), cpu.Finish8(&s[2]), cpu.Finish8(&s[3])}
}

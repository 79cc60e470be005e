package mulmat

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/parallel"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// MulMat computes ggml_mul_mat(a, b) into dst the way ggml's CPU backend
// does: dst[i0, i1, i2, i3] = Σ_k a[k, i0, i2/r2, i3/r3] · b[k, i1, i2, i3],
// with dst F32 of shape [a.ne1, b.ne1, b.ne2, b.ne3] (dst may be strided)
// and a broadcast over b's dims 2 and 3 (r2 = b.ne2/a.ne2, r3 =
// b.ne3/a.ne3).
//
// a may be any float or quantized type with a host codec; b f32 or f16.
// For f32, f16, q8_0, q4_0 and q4_K weights, as on the CPU, b is
// first converted to a's "vec_dot type": f32 for f32 weights, f16 (rounded)
// for f16 weights, q8_0 for q8_0 and q4_0 weights, q8_K for q4_K weights
// (with ggml's reference quantizers); quantized dot products are then
// computed in integers per block, without dequantizing a. The work is
// spread over parallel.Workers() goroutines by tiles of src0 rows. Other weight
// types are dequantized first (mulmat_generic.go).
//
// Where ggml's CPU computes f32 or f16 weights by llamafile's tinyBLAS
// (n ≥ 2 columns, k a multiple of 16, m of 4: sgemmOrder), so does MulMat,
// in the order of ggml's AVX-512 build, bit for bit (mulmat_sgemm.go).
//
// Built with GOEXPERIMENT=simd on amd64 and run on a CPU with AVX2, f32,
// f16, q8_0 and q4_0 weights use vector kernels (mulmat_simd_amd64.go).
// Their results are bit-identical to the scalar kernels' except, outside
// the tinyBLAS shapes, for f32 and f16 weights with n ≥ 4 columns, where
// the scalar kernels sum four columns at a time in a different order and
// the last bits may differ.
// With AVX-512 (and VNNI) the q8_0 and q4_0 kernels have 512-bit forms
// (mulmat_tile512_simd_amd64.go, mulmat_vnni_amd64.s), bit-identical too.
func (ks *Kernels) MulMat(dst, a, b *ops.Tensor) error {
	if err := mulMatWeightType(ops.OpMulMat, a.Type); err != nil {
		return err
	}
	if b.Type != ops.F32 && b.Type != ops.F16 {
		return fmt.Errorf("mul_mat: unsupported src1 type %s (want f32 or f16)", b.Type)
	}
	if err := checkMulMat(a, b); err != nil {
		return err
	}
	if dst.Type != ops.F32 {
		return fmt.Errorf("mul_mat: dst type %s, want f32", dst.Type)
	}
	if want := [ops.MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}; dst.Ne != want {
		return fmt.Errorf("mul_mat: dst shape %s, want [%d, %d, %d, %d]", dst.ShapeString(), want[0], want[1], want[2], want[3])
	}
	ks.mulMat(dst, a, b, ks.Vec)
	return nil
}

// RefMulMat is MUL_MAT's reference math (srcs = a, b).
func (ks *Kernels) RefMulMat(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return ks.MulMat(dst, srcs[0], srcs[1])
}

func checkMulMat(a, b *ops.Tensor) error {
	if err := mulMatWeightType(ops.OpMulMat, a.Type); err != nil {
		return err
	}
	if b.Type != ops.F32 && b.Type != ops.F16 {
		return fmt.Errorf("mul_mat: unsupported src1 type %s (want f32 or f16)", b.Type)
	}
	if a.Ne[0] != b.Ne[0] {
		return fmt.Errorf("mul_mat: ne0 differ: src0 %s, src1 %s", a.ShapeString(), b.ShapeString())
	}
	if a.Ne[2] == 0 || a.Ne[3] == 0 || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 {
		return fmt.Errorf("mul_mat: src1 dims 2,3 %s are not multiples of src0's %s", b.ShapeString(), a.ShapeString())
	}
	if a.Ne[0]%int64(a.Type.BlockSize()) != 0 {
		return fmt.Errorf("mul_mat: ne0 = %d is not a multiple of the %s block size %d", a.Ne[0], a.Type, a.Type.BlockSize())
	}
	if a.Nb[0] != uint64(a.Type.TypeSize()) {
		return fmt.Errorf("mul_mat: src0 rows are not dense (nb0 = %d, want %d)", a.Nb[0], a.Type.TypeSize())
	}
	return nil
}

// actRows holds src1 converted to the vec_dot type, one row per
// (i11, i12, i13), row r = i11 + ne11*(i12 + ne12*i13).
type actRows struct {
	ks  *Kernels // the kernels its dots run
	k   int
	vec bool      // use the vector kernels (mulmat_simd_amd64.go) where there are some
	q   []int8    // q8_0 path with vec or the assembly kernels (asmAlone, qasm): the plain quants, k per row
	f32 []float32 // f32/f16 paths: k values per row
	h   []uint16  // f16 weights by the AVX-512 tiles (sgemmHalves): the halves of f32, in place of it
	pk  []uint64  // q8_0/q8_K paths: the quants packed by packAct, k/4 words per row
	d   []float32 // per-block scale (k/32 or k/256 per row)
	s   []int32   // q8_0: per-block Σq (k/32 per row); q8_K: per-16 sums (k/16 per row)
	// q4, d4 and s4 are q, d and s of each four columns of a batch
	// interleaved by block, nq fours a batch (packQuads; nil: none).
	q4 []int8
	d4 []float32
	s4 []int32
	nq int
}

// asmAlone reports whether the scalar kernels (vec false) take the
// assembly ones where the CPU has them — the VNNI kernels for groups of
// eight q8_0 or q4_0 rows (mulmat_tile.go), the eight-row f16 and f32 dot
// products for one column (mulmat_dot8_amd64.go) — as they do where that
// assembly is the only vector code: in the plain build (GOEXPERIMENT=simd
// off). A build with the vector kernels keeps vec false for the scalar
// ones alone, which the tests compare against. Either way the results are
// the scalar kernels' bits.
func (ks *Kernels) asmAlone(vec bool) bool { return !vec && !ks.Vec }

// prepareActivations converts b for a's kernels, vector ones if the CPU
// has them.
func (ks *Kernels) prepareActivations(a, b *ops.Tensor) *actRows {
	return ks.prepareActivationsVec(a, b, ks.Vec, false)
}

// prepareActivationsVec is prepareActivations with the vector kernels on
// or off (vec); halves asks for f16 weights' activations in act.h.
func (ks *Kernels) prepareActivationsVec(a, b *ops.Tensor, vec, halves bool) *actRows {
	k := int(b.Ne[0])
	nrows := int(b.Ne[1] * b.Ne[2] * b.Ne[3])
	act := &actRows{ks: ks, k: k, vec: vec}
	kt := kernelType(a.Type)
	// The buffers come from the scratch pools (free gives them back);
	// every entry the kernels use is written below.
	switch kt {
	case ops.F32, ops.F16:
		if halves {
			act.h = cpu.ScratchU16.Get(nrows * k)
		} else {
			act.f32 = cpu.ScratchF32.Get(nrows * k)
		}
	case ops.Q8_0, ops.Q4_0:
		if vec || ks.asmAlone(vec) && ks.qasm() {
			act.q = cpu.ScratchI8.Get(nrows * k)
		}
		if !vec {
			act.pk = cpu.ScratchU64.Get(nrows * k / 4) // for dot1 and dot4
		}
		// actPad more for the eight-row kernels' loads (mulmat_tile.go),
		// zeros as those of a new slice were.
		nb := nrows * k / codec.QK8_0
		act.d = cpu.ScratchF32.Get(nb + actPad)
		act.s = cpu.ScratchI32.Get(nb + actPad)
		clear(act.d[nb:])
		clear(act.s[nb:])
		act.d, act.s = act.d[:nb], act.s[:nb]
	case ops.Q4_K:
		act.pk = cpu.ScratchU64.Get(nrows * k / 4)
		act.d = cpu.ScratchF32.Get(nrows * k / codec.QKK)
		act.s = cpu.ScratchI32.Get(nrows * k / 16)
	}
	ne1, ne2 := int(b.Ne[1]), int(b.Ne[2])
	// Chunks of at least actChunkValues values: MUL_MAT_ID's four rows
	// of 2048 at n = 1 are quantized on both threads rather than on the
	// caller alone while the pool's helpers fall asleep.
	parallel.For(nrows, max(1, actChunkValues/max(k, 1)), func(lo, hi int) {
		tmp := cpu.ScratchF32.Get(k)
		defer cpu.ScratchF32.Put(tmp)
		q := cpu.ScratchI8.Get(k)
		defer cpu.ScratchI8.Put(q)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := r%ne1, (r/ne1)%ne2, r/(ne1*ne2)
			b.Row(int64(i1), int64(i2), int64(i3), tmp)
			switch kt {
			case ops.F32:
				if a.Type == ops.BF16 { // ggml's CPU converts them to bf16, its vec_dot type
					for i, v := range tmp {
						tmp[i] = codec.BF16ToF32(codec.F32ToBF16(v))
					}
				}
				copy(act.f32[r*k:], tmp)
			case ops.F16:
				if act.h != nil {
					ks.F32ToF16Row(act.h[r*k:(r+1)*k], tmp)
					break
				}
				out := act.f32[r*k : (r+1)*k]
				for i, v := range tmp {
					out[i] = ops.RoundF16(v)
				}
			case ops.Q8_0, ops.Q4_0:
				nb := k / codec.QK8_0
				qr := q
				if act.q != nil {
					qr = act.q[r*k : (r+1)*k]
				}
				quantizeRowQ8_0Act(tmp, qr, act.d[r*nb:(r+1)*nb], act.s[r*nb:(r+1)*nb])
				if act.pk != nil {
					packAct(qr, act.pk[r*k/4:(r+1)*k/4])
				}
			case ops.Q4_K:
				nb := k / codec.QKK
				quantizeRowQ8_KAct(tmp, q, act.d[r*nb:(r+1)*nb], act.s[r*k/16:(r+1)*k/16])
				packAct(q, act.pk[r*k/4:(r+1)*k/4])
			}
		}
	})
	return act
}

// actChunkValues is the fewest activation values a work item of
// prepareActivationsVec converts (quantizing one takes a few ns).
const actChunkValues = 4096

// free gives act's buffers back to the scratch pools; act is not used
// after it.
func (act *actRows) free() {
	cpu.ScratchF32.Put(act.f32)
	cpu.ScratchU16.Put(act.h)
	cpu.ScratchI8.Put(act.q)
	cpu.ScratchU64.Put(act.pk)
	cpu.ScratchF32.Put(act.d)
	cpu.ScratchI32.Put(act.s)
	cpu.ScratchI8.Put(act.q4)
	cpu.ScratchF32.Put(act.d4)
	cpu.ScratchI32.Put(act.s4)
	*act = actRows{}
}

// quantizeRowQ8_0Act is quantize_row_q8_0_ref, keeping the scale as the
// widened f16 value it is stored as, plus each block's Σq.
func quantizeRowQ8_0Act(x []float32, q []int8, d []float32, s []int32) {
	var blk [34]byte
	for b := range d {
		codec.QuantizeBlockQ8_0(x[b*codec.QK8_0:(b+1)*codec.QK8_0], blk[:])
		d[b] = ops.F16ToF32(binary.LittleEndian.Uint16(blk[:]))
		var sum int32
		for j := 0; j < codec.QK8_0; j++ {
			v := int8(blk[2+j])
			q[b*codec.QK8_0+j] = v
			sum += int32(v)
		}
		s[b] = sum
	}
}

// quantizeRowQ8_KAct is quantize_row_q8_K_ref: per 256 values, iscale =
// −127/max (max = the value of largest magnitude), q = min(127,
// nearest_int(iscale·x)), d = 1/iscale (float32), and the sums of each 16
// quants (bsums).
func quantizeRowQ8_KAct(x []float32, q []int8, d []float32, bsums []int32) {
	for b := range d {
		xs := x[b*codec.QKK : (b+1)*codec.QKK]
		qs := q[b*codec.QKK : (b+1)*codec.QKK]
		var amax, mx float32
		for _, v := range xs {
			if a := codec.Abs32(v); a > amax {
				amax, mx = a, v
			}
		}
		if amax == 0 {
			d[b] = 0
			clear(qs)
			clear(bsums[b*16 : (b+1)*16])
			continue
		}
		iscale := -127 / mx
		for j, v := range xs {
			qs[j] = int8(min(127, codec.NearestInt(float32(iscale*v))))
		}
		for j := 0; j < 16; j++ {
			var sum int32
			for _, v := range qs[16*j : 16*j+16] {
				sum += int32(v)
			}
			bsums[b*16+j] = sum
		}
		d[b] = 1 / iscale
	}
}

// The quantized dot products use SWAR ("SIMD within a register") on
// 64-bit integers, since Go has no vector intrinsics. Weights are 4-bit
// values w (q4_0, q4_K nibbles, and the two nibbles of a q8_0 byte with
// its sign bit flipped), spread into the four 16-bit lanes of a word:
// W = Σ_i w_i·2^(16i). Activations are int8 values b, packed in reverse
// lane order as a signed integer: B = Σ_j b_j·2^(16(3−j)). Modulo 2^64,
//
// 	W·B = D·2^48 + L,  D = Σ_i w_i·b_i,  L = Σ_{i<j} w_i·b_j·2^(16(3+i−j)),
//
// (the terms with i > j are multiples of 2^64 and vanish). With |w| ≤ 15
// and |b| ≤ 127, summing up to four such products keeps |D| ≤ 30480 <
// 2^15 and |L| < 2^47, so adding 2^47 and shifting right arithmetically
// by 48 yields D exactly: four multiplications give sixteen
// multiply-accumulates. The results are bit-identical to the plain
// integer loops (see the tests).

const (
	swarNibbles = 0x000F000F000F000F // the low nibble of every other byte, one per 16-bit lane
	swarBias    = 1 << 47
	signBits    = 0x8080808080808080
)

// swarDot extracts D from a sum of up to four lane products.
func swarDot(s uint64) int32 { return int32(int64(s+swarBias) >> 48) }

// packAct packs int8 activations q (len a multiple of 8) into p (len/4
// words): for group g of 8 values, p[2g] holds values 0, 2, 4, 6 and
// p[2g+1] values 1, 3, 5, 7, value j of each four at bit 16·(3−j).
func packAct(q []int8, p []uint64) {
	for g := 0; g < len(q)/8; g++ {
		v := q[8*g : 8*g+8 : 8*g+8]
		p[2*g] = uint64(int64(v[0])<<48 + int64(v[2])<<32 + int64(v[4])<<16 + int64(v[6]))
		p[2*g+1] = uint64(int64(v[1])<<48 + int64(v[3])<<32 + int64(v[5])<<16 + int64(v[7]))
	}
}

// mulMatRowTile is how many src0 rows one work item covers (tinyBLAS's
// shapes: sgemmItemRows).
const mulMatRowTile = 16

// mulMatColBlock is how many columns the eight-row kernels take per pass
// over a tile's rows.
const mulMatColBlock = 16

// mulMat is MulMat after its checks; vec selects the vector kernels (only
// with vecOK()), which tests turn off to compare against the scalar ones.
func (ks *Kernels) mulMat(dst, a, b *ops.Tensor, vec bool) {
	sg := sgemmOrder(a, b) // ggml's tinyBLAS order (mulmat_sgemm.go)
	act := ks.prepareActivationsVec(a, b, vec, sg && ks.sgemmHalves(a.Type, vec, int(b.Ne[0])))
	defer act.free()
	m := int(a.Ne[1])
	n := int(b.Ne[1])
	ne12, ne13 := int(b.Ne[2]), int(b.Ne[3])
	r2, r3 := ne12/int(a.Ne[2]), ne13/int(a.Ne[3])
	rowBytes := int(a.Type.RowSize(a.Ne[0]))
	kt := kernelType(a.Type)
	has8 := act.has8R(kt)
	if has8 && kt == ops.Q8_0 && ks.VNNI && n >= 4 {
		act.packQuads(n)
	}
	itemRows := mulMatRowTile
	if sg {
		itemRows = ks.sgemmItemRows(a.Type, n)
	}
	tiles := (m + itemRows - 1) / itemRows
	parallel.For(tiles*ne12*ne13, 1, func(lo, hi int) {
		var deq *dequantTile
		if kt != a.Type {
			deq = newDequantTile(ks, a)
		}
		var w8 [mulMatRowTile / 8]rows8
		var ft *floatTile // from floatTiles, on first use
		for w := lo; w < hi; w++ {
			tile := w % tiles
			i12 := (w / tiles) % ne12
			i13 := w / (tiles * ne12)
			i02, i03 := i12/r2, i13/r3
			r0 := tile * itemRows
			r1 := min(m, r0+itemRows)
			base := n * (i12 + ne12*i13) // activation row of column 0
			put := func(i01, i11 int, v float32) {
				off := dst.ElemOffset(int64(i01), int64(i11), int64(i12), int64(i13))
				binary.LittleEndian.PutUint32(dst.Buf[off:], math.Float32bits(v))
			}
			rowAt := func(i01 int) []byte { return a.RowBytes(int64(i01), int64(i02), int64(i03))[:rowBytes] }
			if deq != nil {
				deq.load(r0, r1, i02, i03)
				rowAt = deq.row
			}
			if sg {
				if ft == nil {
					ft = floatTiles.Get().(*floatTile)
					defer floatTiles.Put(ft)
				}
				var next []byte // the next tile's rows, if this work item is next to take them
				if r1 < m && w+1 < hi && (w+1)%tiles != 0 {
					next = rowAt(r1)
				}
				ft.sgemmTile(act, kt, rowAt, next, r0, r1, base, n, put)
				continue
			}
			if has8 {
				// Groups of eight rows, then the rest by dot4R and dot1.
				nb := int(a.Ne[0]) / codec.QK8_0
				ng := (r1 - r0) / 8
				for g := range ng {
					var rws [8][]byte
					for i := range rws {
						rws[i] = rowAt(r0 + 8*g + i)
					}
					if ks.fused8(n) {
						w8[g].setRows(kt, &rws, nb)
					} else {
						w8[g].load(ks, kt, &rws, nb)
					}
					// The group's kernels prefetch the rows after it: the
					// next group's, or the next tile's in this matrix.
					var nx unsafe.Pointer
					nr := r0 + 8*g + 8
					if deq == nil && (nr < r1 || w+1 < hi && (w+1)%tiles != 0) {
						nx = unsafe.Pointer(&rowAt(nr)[0])
					}
					w8[g].setNext(nx, int(a.Nb[1]), rowBytes)
				}
				// Blocks of columns, so that their activations stay in
				// the cache with the tile's weights.
				for c0 := 0; c0 < n; c0 += mulMatColBlock {
					c1 := min(n, c0+mulMatColBlock)
					for g := range ng {
						i11 := c0
						if act.q4 != nil && w8[g].fused { // (c0 and so i11 a multiple of 4)
							for ; i11+4 <= c1; i11 += 4 {
								out := act.dot8R4(&w8[g], base/n, i11/4)
								for c := range 4 {
									for j := range 8 {
										put(r0+8*g+j, i11+c, out[8*c+j])
									}
								}
							}
						}
						if act.has8R2(kt, &w8[g]) {
							for ; i11+2 <= c1; i11 += 2 {
								out, out2 := act.dot8R2(kt, &w8[g], base+i11, base+i11+1)
								for j := range out {
									put(r0+8*g+j, i11, out[j])
									put(r0+8*g+j, i11+1, out2[j])
								}
							}
						}
						for ; i11 < c1; i11++ {
							out := act.dot8R(kt, &w8[g], base+i11)
							for j, v := range out {
								put(r0+8*g+j, i11, v)
							}
						}
					}
				}
				for i11 := 0; i11 < n; i11++ {
					i01 := r0 + 8*ng
					for ; i01+4 <= r1 && act.has4R(kt); i01 += 4 {
						out := act.dot4R(kt, rowAt(i01), rowAt(i01+1), rowAt(i01+2), rowAt(i01+3), base+i11)
						for j, v := range out {
							put(i01+j, i11, v)
						}
					}
					for ; i01 < r1; i01++ {
						put(i01, i11, act.dot1(kt, rowAt(i01), base+i11))
					}
				}
				continue
			}
			if act.vec && (kt == ops.F16 && n >= 2 || kt == ops.F32 && n >= 4) {
				// Register tiles (mulmat_ftile.go). f32 weights with two or
				// three columns are as fast by the kernels below, which read
				// four rows at once.
				if ft == nil {
					ft = floatTiles.Get().(*floatTile)
					defer floatTiles.Put(ft)
				}
				ft.mulTile(act, kt, rowAt, r0, r1, base, n, put)
				continue
			}
			kc := kt // the kernels' weight type for this tile
			// Columns in groups of four share each decoded weight.
			for i11 := 0; i11 < n; i11 += 4 {
				nc := min(4, n-i11)
				if dot8 := act.hasDot8F(kc); nc < 4 && (act.has4R(kc) || dot8) {
					// The vector kernels take four rows at a time instead.
					for c := 0; c < nc; c++ {
						i01 := r0
						if dot8 {
							// Eight rows at once (mulmat_dot8_amd64.go).
							for ; i01+8 <= r1; i01 += 8 {
								var rws [8][]byte
								for j := range rws {
									rws[j] = rowAt(i01 + j)
								}
								y := act.f32[(base+i11+c)*act.k : (base+i11+c+1)*act.k]
								for j, v := range cpu.Dot8F(kc, &rws, y) {
									put(i01+j, i11+c, v)
								}
							}
						}
						for ; i01+4 <= r1 && act.has4R(kc); i01 += 4 {
							out := act.dot4R(kc, rowAt(i01), rowAt(i01+1), rowAt(i01+2), rowAt(i01+3), base+i11+c)
							for j, v := range out {
								put(i01+j, i11+c, v)
							}
						}
						for ; i01 < r1; i01++ {
							put(i01, i11+c, act.dot1(kc, rowAt(i01), base+i11+c))
						}
					}
					continue
				}
				for i01 := r0; i01 < r1; i01++ {
					row := rowAt(i01)
					var out [4]float32
					if nc == 4 {
						out = act.dot4(kc, row, base+i11)
					} else {
						for c := 0; c < nc; c++ {
							out[c] = act.dot1(kc, row, base+i11+c)
						}
					}
					for c := 0; c < nc; c++ {
						put(i01, i11+c, out[c])
					}
				}
			}
		}
	})
}

// dot1 is the dot product of a src0 row with activation row r.
func (act *actRows) dot1(t ops.Type, row []byte, r int) float32 {
	k := act.k
	if act.vec {
		switch t {
		case ops.F32:
			return dotF32Vec(row, act.f32[r*k:(r+1)*k])
		case ops.F16:
			return dotF16Vec(row, act.f32[r*k:(r+1)*k])
		case ops.Q8_0:
			nb := k / codec.QK8_0
			return dotQ8_0Vec(row, act.q[r*k:(r+1)*k], act.d[r*nb:(r+1)*nb])
		case ops.Q4_0:
			nb := k / codec.QK4_0
			return dotQ4_0Vec(row, act.q[r*k:(r+1)*k], act.d[r*nb:(r+1)*nb], act.s[r*nb:(r+1)*nb])
		}
	}
	switch t {
	case ops.F32:
		return dotF32Bytes(row, act.f32[r*k:(r+1)*k])
	case ops.F16:
		return dotF16Bytes(row, act.f32[r*k:(r+1)*k])
	case ops.Q8_0:
		nb := k / codec.QK8_0
		return dotQ8_0(row, act.pk[r*k/4:(r+1)*k/4], act.d[r*nb:(r+1)*nb], act.s[r*nb:(r+1)*nb])
	case ops.Q4_0:
		nb := k / codec.QK4_0
		return dotQ4_0(row, act.pk[r*k/4:(r+1)*k/4], act.d[r*nb:(r+1)*nb], act.s[r*nb:(r+1)*nb])
	case ops.Q4_K:
		nb := k / codec.QKK
		return dotQ4_K(row, act.pk[r*k/4:(r+1)*k/4], act.d[r*nb:(r+1)*nb], act.s[r*k/16:(r+1)*k/16])
	}
	panic("unreachable")
}

// dot4 is the dot product of a src0 row with activation rows r..r+3,
// decoding each weight once.
func (act *actRows) dot4(t ops.Type, row []byte, r int) [4]float32 {
	k := act.k
	if act.vec {
		switch t {
		case ops.F32:
			return dotF32Vec4C(row, act.f32[r*k:(r+4)*k])
		case ops.F16:
			return dotF16Vec4C(row, act.f32[r*k:(r+4)*k])
		case ops.Q8_0, ops.Q4_0:
			var out [4]float32
			for c := 0; c < 4; c++ {
				out[c] = act.dot1(t, row, r+c)
			}
			return out
		}
	}
	switch t {
	case ops.F32:
		return dotF32Bytes4(row, act.f32[r*k:(r+4)*k])
	case ops.F16:
		return dotF16Bytes4(row, act.f32[r*k:(r+4)*k])
	case ops.Q8_0, ops.Q4_0:
		nb := k / codec.QK8_0
		return dotQ4_0Q8_0x4(t, row, act.pk[r*k/4:(r+4)*k/4], act.d[r*nb:(r+4)*nb], act.s[r*nb:(r+4)*nb])
	case ops.Q4_K:
		var out [4]float32
		for c := 0; c < 4; c++ {
			out[c] = act.dot1(t, row, r+c)
		}
		return out
	}
	panic("unreachable")
}

// has4R reports whether dot4R has a kernel for t.
func (act *actRows) has4R(t ops.Type) bool {
	return act.vec && (t == ops.F32 || t == ops.F16 || t == ops.Q8_0 || t == ops.Q4_0)
}

// hasDot8F reports whether the eight-row f16 or f32 assembly
// (cpu.Dot8F: amd64's F16Dot and F32Dot8, arm64's NEON) takes weights of
// type t against one column: f16 with the vector kernels or alone
// (asmAlone), f32 alone (the vector build's four-row kernels are as fast).
func (act *actRows) hasDot8F(t ops.Type) bool {
	ks := act.ks
	switch t {
	case ops.F16:
		return (ks.F16Dot || ks.NEON) && (act.vec || ks.asmAlone(act.vec))
	case ops.F32:
		return (ks.F32Dot8 || ks.NEON) && ks.asmAlone(act.vec)
	}
	return false
}

// dot4R is dot1 of four src0 rows with activation row r, by the vector
// kernels (only when has4R).
func (act *actRows) dot4R(t ops.Type, a0, a1, a2, a3 []byte, r int) [4]float32 {
	ks := act.ks
	k := act.k
	switch t {
	case ops.F32:
		return dotF32Vec4R(a0, a1, a2, a3, act.f32[r*k:(r+1)*k])
	case ops.F16:
		return ks.dotF16Vec4R(a0, a1, a2, a3, act.f32[r*k:(r+1)*k])
	case ops.Q8_0:
		nb := k / codec.QK8_0
		return dotQ8_0Vec4R(a0, a1, a2, a3, act.q[r*k:(r+1)*k], act.d[r*nb:(r+1)*nb])
	case ops.Q4_0:
		nb := k / codec.QK4_0
		return dotQ4_0Vec4R(a0, a1, a2, a3, act.q[r*k:(r+1)*k], act.d[r*nb:(r+1)*nb], act.s[r*nb:(r+1)*nb])
	}
	panic("unreachable")
}

// dotF32Bytes4 is dotF32Bytes against four activation rows stored one
// after the other in b (len(b) = 4k).
func dotF32Bytes4(a []byte, b []float32) [4]float32 {
	n := len(b) / 4
	a = a[:4*n]
	b0, b1, b2, b3 := b[:n:n], b[n:2*n:2*n], b[2*n:3*n:3*n], b[3*n:4*n:4*n]
	var s00, s01, s10, s11, s20, s21, s30, s31 float32
	i := 0
	if v, ok := f32View(a); ok {
		v = v[:n]
		for ; i+2 <= n; i += 2 {
			x := v[i : i+2 : i+2]
			y0, y1, y2, y3 := b0[i:i+2:i+2], b1[i:i+2:i+2], b2[i:i+2:i+2], b3[i:i+2:i+2]
			s00 += float32(x[0] * y0[0])
			s01 += float32(x[1] * y0[1])
			s10 += float32(x[0] * y1[0])
			s11 += float32(x[1] * y1[1])
			s20 += float32(x[0] * y2[0])
			s21 += float32(x[1] * y2[1])
			s30 += float32(x[0] * y3[0])
			s31 += float32(x[1] * y3[1])
		}
	}
	for ; i+2 <= n; i += 2 {
		w := a[4*i : 4*i+8 : 4*i+8]
		x0 := math.Float32frombits(binary.LittleEndian.Uint32(w[0:]))
		x1 := math.Float32frombits(binary.LittleEndian.Uint32(w[4:]))
		y0, y1, y2, y3 := b0[i:i+2:i+2], b1[i:i+2:i+2], b2[i:i+2:i+2], b3[i:i+2:i+2]
		s00 += float32(x0 * y0[0])
		s01 += float32(x1 * y0[1])
		s10 += float32(x0 * y1[0])
		s11 += float32(x1 * y1[1])
		s20 += float32(x0 * y2[0])
		s21 += float32(x1 * y2[1])
		s30 += float32(x0 * y3[0])
		s31 += float32(x1 * y3[1])
	}
	for ; i < n; i++ {
		x := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:]))
		s00 += float32(x * b0[i])
		s10 += float32(x * b1[i])
		s20 += float32(x * b2[i])
		s30 += float32(x * b3[i])
	}
	return [4]float32{s00 + s01, s10 + s11, s20 + s21, s30 + s31}
}

// dotF16Bytes4 is dotF16Bytes against four activation rows stored one
// after the other in b (len(b) = 4k).
func dotF16Bytes4(a []byte, b []float32) [4]float32 {
	tab := ops.F16ToF32Table()
	n := len(b) / 4
	a = a[:2*n]
	b0, b1, b2, b3 := b[:n:n], b[n:2*n:2*n], b[2*n:3*n:3*n], b[3*n:4*n:4*n]
	var s00, s01, s10, s11, s20, s21, s30, s31 float32
	i := 0
	for ; i+2 <= n; i += 2 {
		w := a[2*i : 2*i+4 : 2*i+4]
		x0 := tab[binary.LittleEndian.Uint16(w[0:])]
		x1 := tab[binary.LittleEndian.Uint16(w[2:])]
		y0, y1, y2, y3 := b0[i:i+2:i+2], b1[i:i+2:i+2], b2[i:i+2:i+2], b3[i:i+2:i+2]
		s00 += float32(x0 * y0[0])
		s01 += float32(x1 * y0[1])
		s10 += float32(x0 * y1[0])
		s11 += float32(x1 * y1[1])
		s20 += float32(x0 * y2[0])
		s21 += float32(x1 * y2[1])
		s30 += float32(x0 * y3[0])
		s31 += float32(x1 * y3[1])
	}
	for ; i < n; i++ {
		x := tab[binary.LittleEndian.Uint16(a[2*i:])]
		s00 += float32(x * b0[i])
		s10 += float32(x * b1[i])
		s20 += float32(x * b2[i])
		s30 += float32(x * b3[i])
	}
	return [4]float32{s00 + s01, s10 + s11, s20 + s21, s30 + s31}
}

// dotQ4_0Q8_0x4 is dotQ4_0 (t == Q4_0) or dotQ8_0 (t == Q8_0) against four
// activation rows stored one after the other, unpacking each weight word
// once.
func dotQ4_0Q8_0x4(t ops.Type, a []byte, p []uint64, d []float32, s []int32) [4]float32 {
	tab := ops.F16ToF32Table()
	nb := len(d) / 4
	bsz := 18
	if t == ops.Q8_0 {
		bsz = 34
	}
	a = a[:nb*bsz]
	var pc [4][]uint64
	var dc [4][]float32
	var sc [4][]int32
	for c := range 4 {
		pc[c] = p[c*nb*8 : (c+1)*nb*8]
		dc[c] = d[c*nb : (c+1)*nb]
		sc[c] = s[c*nb : (c+1)*nb]
	}
	var sum [4]float32
	var w [16]uint64 // unpacked weight words: low nibbles in w[0:8], high in w[8:16]
	for blk := 0; blk < nb; blk++ {
		x := a[blk*bsz : blk*bsz+bsz]
		da := tab[binary.LittleEndian.Uint16(x)]
		if t == ops.Q4_0 {
			w0 := binary.LittleEndian.Uint64(x[2:])
			w1 := binary.LittleEndian.Uint64(x[10:])
			// Elements 0..15 (low nibbles) pair with y[0..3], 16..31 with y[4..7].
			w[0], w[1], w[2], w[3] = w0&swarNibbles, w0>>8&swarNibbles, w1&swarNibbles, w1>>8&swarNibbles
			w[4], w[5], w[6], w[7] = w0>>4&swarNibbles, w0>>12&swarNibbles, w1>>4&swarNibbles, w1>>12&swarNibbles
			for c := range 4 {
				y := pc[c][blk*8 : blk*8+8 : blk*8+8]
				lo := w[0]*y[0] + w[1]*y[1] + w[2]*y[2] + w[3]*y[3]
				hi := w[4]*y[4] + w[5]*y[5] + w[6]*y[6] + w[7]*y[7]
				isum := swarDot(lo) + swarDot(hi) - 8*sc[c][blk]
				sum[c] += float32(float32(isum) * float32(da*dc[c][blk]))
			}
			continue
		}
		u0 := binary.LittleEndian.Uint64(x[2:]) ^ signBits
		u1 := binary.LittleEndian.Uint64(x[10:]) ^ signBits
		u2 := binary.LittleEndian.Uint64(x[18:]) ^ signBits
		u3 := binary.LittleEndian.Uint64(x[26:]) ^ signBits
		w[0], w[1], w[2], w[3] = u0&swarNibbles, u0>>8&swarNibbles, u1&swarNibbles, u1>>8&swarNibbles
		w[4], w[5], w[6], w[7] = u2&swarNibbles, u2>>8&swarNibbles, u3&swarNibbles, u3>>8&swarNibbles
		w[8], w[9], w[10], w[11] = u0>>4&swarNibbles, u0>>12&swarNibbles, u1>>4&swarNibbles, u1>>12&swarNibbles
		w[12], w[13], w[14], w[15] = u2>>4&swarNibbles, u2>>12&swarNibbles, u3>>4&swarNibbles, u3>>12&swarNibbles
		for c := range 4 {
			y := pc[c][blk*8 : blk*8+8 : blk*8+8]
			l1 := w[0]*y[0] + w[1]*y[1] + w[2]*y[2] + w[3]*y[3]
			l2 := w[4]*y[4] + w[5]*y[5] + w[6]*y[6] + w[7]*y[7]
			h1 := w[8]*y[0] + w[9]*y[1] + w[10]*y[2] + w[11]*y[3]
			h2 := w[12]*y[4] + w[13]*y[5] + w[14]*y[6] + w[15]*y[7]
			isum := 16*(swarDot(h1)+swarDot(h2)) + swarDot(l1) + swarDot(l2) - 128*sc[c][blk]
			sum[c] += float32(float32(isum) * float32(da*dc[c][blk]))
		}
	}
	return sum
}

// f32View returns the little-endian float32 bytes b as a []float32
// sharing its memory, when the machine is little-endian and b is 4-byte
// aligned (always so for rows of buffers made by New); ok is false
// otherwise and the caller decodes byte by byte. Loading float32s
// directly lets the compiler use memory operands in the dot products,
// about 25% faster than decoding.
func f32View(b []byte) (v []float32, ok bool) {
	if len(b) < 4 || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), true
}

// DotF32 is Σ a[i]·b[i] with eight partial sums.
func DotF32(a, b []float32) float32 {
	n := len(b)
	a = a[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += float32(x[0] * y[0])
		s1 += float32(x[1] * y[1])
		s2 += float32(x[2] * y[2])
		s3 += float32(x[3] * y[3])
		s4 += float32(x[4] * y[4])
		s5 += float32(x[5] * y[5])
		s6 += float32(x[6] * y[6])
		s7 += float32(x[7] * y[7])
	}
	for ; i < n; i++ {
		s0 += float32(a[i] * b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotF32Bytes is Σ a[i]·b[i] with a little-endian float32 bytes.
func dotF32Bytes(a []byte, b []float32) float32 {
	n := len(b)
	if v, ok := f32View(a[:4*n]); ok {
		return DotF32(v, b)
	}
	a = a[:4*n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		w := a[4*i : 4*i+32 : 4*i+32]
		y := b[i : i+8 : i+8]
		s0 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[0:])) * y[0])
		s1 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[4:])) * y[1])
		s2 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[8:])) * y[2])
		s3 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[12:])) * y[3])
		s4 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[16:])) * y[4])
		s5 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[20:])) * y[5])
		s6 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[24:])) * y[6])
		s7 += float32(math.Float32frombits(binary.LittleEndian.Uint32(w[28:])) * y[7])
	}
	for ; i < n; i++ {
		s0 += float32(math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:])) * b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotF16Bytes is Σ a[i]·b[i] with a little-endian f16 bytes, widened
// exactly through the table.
func dotF16Bytes(a []byte, b []float32) float32 {
	tab := ops.F16ToF32Table()
	n := len(b)
	a = a[:2*n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		w := a[2*i : 2*i+16 : 2*i+16]
		y := b[i : i+8 : i+8]
		s0 += float32(tab[binary.LittleEndian.Uint16(w[0:])] * y[0])
		s1 += float32(tab[binary.LittleEndian.Uint16(w[2:])] * y[1])
		s2 += float32(tab[binary.LittleEndian.Uint16(w[4:])] * y[2])
		s3 += float32(tab[binary.LittleEndian.Uint16(w[6:])] * y[3])
		s4 += float32(tab[binary.LittleEndian.Uint16(w[8:])] * y[4])
		s5 += float32(tab[binary.LittleEndian.Uint16(w[10:])] * y[5])
		s6 += float32(tab[binary.LittleEndian.Uint16(w[12:])] * y[6])
		s7 += float32(tab[binary.LittleEndian.Uint16(w[14:])] * y[7])
	}
	for ; i < n; i++ {
		s0 += float32(tab[binary.LittleEndian.Uint16(a[2*i:])] * b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0: per block, the integer dot product
// Σ a·b scaled by d_a·d_b. With u = a+128 = 16h+l (the byte with its sign
// bit flipped), Σ a·b = 16·Σ h·b + Σ l·b − 128·Σ b, each nibble sum by SWAR.
func dotQ8_0(a []byte, p []uint64, d []float32, s []int32) float32 {
	tab := ops.F16ToF32Table()
	nb := len(d)
	a = a[:nb*34]
	p = p[:nb*8]
	s = s[:nb]
	var sum float32
	for blk := 0; blk < nb; blk++ {
		x := a[blk*34 : blk*34+34 : blk*34+34]
		y := p[blk*8 : blk*8+8 : blk*8+8]
		u0 := binary.LittleEndian.Uint64(x[2:]) ^ signBits
		u1 := binary.LittleEndian.Uint64(x[10:]) ^ signBits
		u2 := binary.LittleEndian.Uint64(x[18:]) ^ signBits
		u3 := binary.LittleEndian.Uint64(x[26:]) ^ signBits
		l1 := (u0&swarNibbles)*y[0] + (u0>>8&swarNibbles)*y[1] + (u1&swarNibbles)*y[2] + (u1>>8&swarNibbles)*y[3]
		l2 := (u2&swarNibbles)*y[4] + (u2>>8&swarNibbles)*y[5] + (u3&swarNibbles)*y[6] + (u3>>8&swarNibbles)*y[7]
		h1 := (u0>>4&swarNibbles)*y[0] + (u0>>12&swarNibbles)*y[1] + (u1>>4&swarNibbles)*y[2] + (u1>>12&swarNibbles)*y[3]
		h2 := (u2>>4&swarNibbles)*y[4] + (u2>>12&swarNibbles)*y[5] + (u3>>4&swarNibbles)*y[6] + (u3>>12&swarNibbles)*y[7]
		isum := 16*(swarDot(h1)+swarDot(h2)) + swarDot(l1) + swarDot(l2) - 128*s[blk]
		sum += float32(float32(isum) * float32(tab[binary.LittleEndian.Uint16(x)]*d[blk]))
	}
	return sum
}

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0: Σ (q4−8)·q8 per block, computed as
// Σ q4·q8 − 8·Σq8 by SWAR, scaled by d_a·d_b. Byte j holds element j in
// its low nibble and element j+16 in its high nibble.
func dotQ4_0(a []byte, p []uint64, d []float32, s []int32) float32 {
	tab := ops.F16ToF32Table()
	nb := len(d)
	a = a[:nb*18]
	p = p[:nb*8]
	s = s[:nb]
	var sum float32
	for blk := 0; blk < nb; blk++ {
		x := a[blk*18 : blk*18+18 : blk*18+18]
		y := p[blk*8 : blk*8+8 : blk*8+8]
		w0 := binary.LittleEndian.Uint64(x[2:])
		w1 := binary.LittleEndian.Uint64(x[10:])
		lo := (w0&swarNibbles)*y[0] + (w0>>8&swarNibbles)*y[1] + (w1&swarNibbles)*y[2] + (w1>>8&swarNibbles)*y[3]
		hi := (w0>>4&swarNibbles)*y[4] + (w0>>12&swarNibbles)*y[5] + (w1>>4&swarNibbles)*y[6] + (w1>>12&swarNibbles)*y[7]
		isum := swarDot(lo) + swarDot(hi) - 8*s[blk]
		sum += float32(float32(isum) * float32(tab[binary.LittleEndian.Uint16(x)]*d[blk]))
	}
	return sum
}

// dotQ4_K is ggml_vec_dot_q4_K_q8_K: per 256-block, Σ_j sc_j·(q4·q8)_j
// scaled by d_a·d_b, minus dmin_a·d_b·Σ_j m_j·bsum_j. In 64-element chunk
// c, byte 32c+l holds element l of sub-block 2c (low nibble) and of
// sub-block 2c+1 (high nibble).
func dotQ4_K(a []byte, p []uint64, d []float32, bsums []int32) float32 {
	tab := ops.F16ToF32Table()
	nb := len(d)
	a = a[:nb*144]
	p = p[:nb*64]
	bsums = bsums[:nb*16]
	var sum float32
	for blk := 0; blk < nb; blk++ {
		x := a[blk*144 : blk*144+144 : blk*144+144]
		bs := bsums[blk*16 : blk*16+16 : blk*16+16]
		dd := float32(tab[binary.LittleEndian.Uint16(x[0:])] * d[blk])
		dm := float32(tab[binary.LittleEndian.Uint16(x[2:])] * d[blk])
		scales := x[4:16]
		var isum, msum int32
		for c := 0; c < 4; c++ {
			sc1, m1 := codec.ScaleMinK4(2*c, scales)
			sc2, m2 := codec.ScaleMinK4(2*c+1, scales)
			q := x[16+32*c : 16+32*c+32 : 16+32*c+32]
			y := p[blk*64+16*c : blk*64+16*c+16 : blk*64+16*c+16]
			w0 := binary.LittleEndian.Uint64(q[0:])
			w1 := binary.LittleEndian.Uint64(q[8:])
			w2 := binary.LittleEndian.Uint64(q[16:])
			w3 := binary.LittleEndian.Uint64(q[24:])
			lo1 := (w0&swarNibbles)*y[0] + (w0>>8&swarNibbles)*y[1] + (w1&swarNibbles)*y[2] + (w1>>8&swarNibbles)*y[3]
			lo2 := (w2&swarNibbles)*y[4] + (w2>>8&swarNibbles)*y[5] + (w3&swarNibbles)*y[6] + (w3>>8&swarNibbles)*y[7]
			hi1 := (w0>>4&swarNibbles)*y[8] + (w0>>12&swarNibbles)*y[9] + (w1>>4&swarNibbles)*y[10] + (w1>>12&swarNibbles)*y[11]
			hi2 := (w2>>4&swarNibbles)*y[12] + (w2>>12&swarNibbles)*y[13] + (w3>>4&swarNibbles)*y[14] + (w3>>12&swarNibbles)*y[15]
			isum += int32(sc1)*(swarDot(lo1)+swarDot(lo2)) + int32(sc2)*(swarDot(hi1)+swarDot(hi2))
			msum += int32(m1)*(bs[4*c]+bs[4*c+1]) + int32(m2)*(bs[4*c+2]+bs[4*c+3])
		}
		sum += float32(float32(dd*float32(isum)) - float32(dm*float32(msum)))
	}
	return sum
}

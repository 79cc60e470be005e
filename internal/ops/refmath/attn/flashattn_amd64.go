package attn

import (
	"math"
	"sync"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// flash_attn_ext for f16 K and V with F16C assembly, in every amd64 build:
// what the plain build (GOEXPERIMENT=simd off) runs in place of the
// vector kernels of flashattn_simd_amd64.go, and what the vector build
// would run on a CPU with F16C but without AVX2 and FMA. It computes the
// scalar loop of RefFlashAttn with two differences of order, both the
// vector kernels' too: the dot products k_j·q sum in eight float32 lanes
// (dot8F: lane l sums the elements i ≡ l mod 8, then the lanes pairwise,
// as ggml_vec_dot_f16 accumulates in float32 lanes) where the scalar loop
// sums in float64 (each product of two halves is exact in float32), and
// the scores and softmax factors of a row are computed first, before its
// accumulator. The accumulator's updates are the scalar loop's float32
// operations, eight lanes at a time (faMadF16C), each rounded to f16 by
// VCVTPS2PH (to nearest even, as RoundF16 for every value but NaN: NaN
// either way). Up to faTileF16C query rows that read the same K and V
// head (the query heads of a KV head, and the query positions) run
// together, key by key, so that each K and V row is read from memory
// once per tile rather than once per row.

// faMadF16C updates the n float32 accumulators at acc (f16 values; n a
// multiple of 8) with the n halves at v: acc = f16(f16(acc·ms) + v·vs),
// each operation rounded to float32: the scalar loop's update at a new
// maximum (vs = 1, and v·1 is v).
//
//go:noescape
func faMadF16C(acc *float32, v unsafe.Pointer, ms, vs float32, n int)

// faAddF16C is faMadF16C with ms = 1 (acc·1 is acc, already an f16
// value): acc = f16(acc + v·vs), the scalar loop's update otherwise.
//
//go:noescape
func faAddF16C(acc *float32, v unsafe.Pointer, vs float32, n int)

// prefetchLines asks for the n bytes from p in the cache (PREFETCHT0, one
// per 64 bytes from p on; p need not be valid memory).
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n int)

// faAheadF16C is how many keys ahead of the one in use flashAttnF16C
// asks for the K or V row: the rows of a KV cache are a few KB apart,
// where the hardware's prefetchers do not follow.
const faAheadF16C = 16

// faTileF16C is how many query rows share a pass over their K and V
// rows: the four query heads of a llama-3 KV head.
const faTileF16C = 4

// faRowF16C is what one query row of a tile keeps.
type faRowF16C struct {
	i1, i2, i3 int64     // q[:, i1, i2, i3]
	q          []float32 // rounded to f16
	mask       []float32
	sc         []float32 // the scores
	ms, vs     []float32 // the softmax factors of each key
	skip       []bool    // keys whose mask is -inf
	acc        []float32
	S, M       float32
}

// faRowsF16C keeps a worker's rows between calls of flashAttnF16C (their
// slices hold the last call's values; every entry read is written first).
var faRowsF16C = sync.Pool{New: func() any { return new([faTileF16C]faRowF16C) }}

// flashAttnF16C runs flash_attn_ext by the F16C kernels and reports
// whether it did; false (nothing written) when the CPU, the types or the
// layout do not fit them.
func (ks *Kernels) flashAttnF16C(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	if !ks.FAF16C || k.Type != ops.F16 || v.Type != ops.F16 || q.Type != ops.F32 || !rowsInBuf(k) || !rowsInBuf(v) {
		return false
	}
	dk, dv, nkv := q.Ne[0], v.Ne[0], k.Ne[1]
	rk2, rk3 := q.Ne[2]/k.Ne[2], q.Ne[3]/k.Ne[3]
	rv2, rv3 := q.Ne[2]/v.Ne[2], q.Ne[3]/v.Ne[3]
	dv8 := dv &^ 7
	negInf := float32(math.Inf(-1))
	kvRow := func(x *ops.Tensor, ic, i2, i3, d int64) []byte {
		o := x.RowOffset(ic, i2, i3)
		return x.Buf[o : o+uint64(2*d)]
	}
	// The rows of one K/V head (ik2, ik3) in tiles (faHeadRow). Where K
	// and V broadcast differently, every row is a head of its own.
	headRows, heads := q.Ne[1]*rk2*rk3, k.Ne[2]*k.Ne[3]
	if rk2 != rv2 || rk3 != rv3 {
		headRows, heads = 1, q.NRows()
	}
	rowAt := func(head, j int64) (i1, i2, i3 int64) {
		if headRows == 1 {
			return ops.RowIndex(q.Ne, head)
		}
		return faHeadRow(q, k, rk2, rk3, head, j)
	}
	tiles := (headRows + faTileF16C - 1) / faTileF16C
	cpu.RefParallel(heads*tiles, faTileF16C*nkv*(dk+dv), func(lo, hi int64) {
		rows := faRowsF16C.Get().(*[faTileF16C]faRowF16C)
		defer faRowsF16C.Put(rows)
		for i := range rows {
			r := &rows[i]
			r.q, r.acc = cpu.Grow(r.q, int(dk)), cpu.Grow(r.acc, int(dv))
			r.sc, r.ms, r.vs, r.skip = cpu.Grow(r.sc, int(nkv)), cpu.Grow(r.ms, int(nkv)), cpu.Grow(r.vs, int(nkv)), cpu.Grow(r.skip, int(nkv))
			if mask != nil {
				r.mask = cpu.Grow(r.mask, int(nkv))
			}
		}
		tab := ops.F16ToF32Table()
		for w := lo; w < hi; w++ {
			head, j0 := w/tiles, (w%tiles)*faTileF16C
			tile := rows[:min(faTileF16C, headRows-j0)]
			for t := range tile {
				r := &tile[t]
				r.i1, r.i2, r.i3 = rowAt(head, j0+int64(t))
				q.Row(r.i1, r.i2, r.i3, r.q)
				for i, x := range r.q {
					r.q[i] = ops.RoundF16(x)
				}
				if mask != nil {
					mask.Row(r.i1, r.i2%mask.Ne[2], r.i3%mask.Ne[3], r.mask)
				}
			}
			ik2, ik3 := tile[0].i2/rk2, tile[0].i3/rk3
			iv2, iv3 := tile[0].i2/rv2, tile[0].i3/rv3
			// The scores, eight keys at a time (the last group padded with
			// copies of the last key), for every row while the keys are
			// in the cache.
			for ic := int64(0); ic < nkv; ic += 8 {
				var kr [8][]byte
				for j := range kr {
					kr[j] = kvRow(k, min(ic+int64(j), nkv-1), ik2, ik3, dk)
					if a := ic + faAheadF16C + int64(j); a < nkv {
						prefetchLines(unsafe.Pointer(&kvRow(k, a, ik2, ik3, dk)[0]), int(2*dk))
					}
				}
				for t := range tile {
					kr := kr
					out := cpu.Dot8F(ops.F16, &kr, tile[t].q)
					copy(tile[t].sc[ic:], out[:min(8, nkv-ic)])
				}
			}
			// The online softmax of each row, which does not depend on
			// the accumulator.
			for t := range tile {
				r := &tile[t]
				sl := slope(r.i2)
				r.S, r.M = 0, negInf
				for ic := range nkv {
					mv := float32(0)
					if mask != nil {
						mv = sl * r.mask[ic]
					}
					if r.skip[ic] = mv == negInf; r.skip[ic] {
						continue
					}
					s := r.sc[ic] * scale
					if softcap != 0 {
						s = softcap * cpu.Tanhf32(s)
					}
					ms, vs := faStep(s+mv, &r.M)
					r.ms[ic], r.vs[ic] = ms, vs
					r.S = float32(r.S*ms) + vs
				}
				clear(r.acc)
			}
			// The accumulators, key by key, each V row for every row.
			for ic := range nkv {
				vr := kvRow(v, ic, iv2, iv3, dv)
				if a := ic + faAheadF16C; a < nkv {
					prefetchLines(unsafe.Pointer(&kvRow(v, a, iv2, iv3, dv)[0]), int(2*dv))
				}
				for t := range tile {
					r := &tile[t]
					if r.skip[ic] {
						continue
					}
					ms, vs := r.ms[ic], r.vs[ic]
					if dv8 > 0 {
						if ms != 1 {
							faMadF16C(&r.acc[0], unsafe.Pointer(&vr[0]), ms, vs, int(dv8))
						} else {
							faAddF16C(&r.acc[0], unsafe.Pointer(&vr[0]), vs, int(dv8))
						}
					}
					for i := dv8; i < dv; i++ {
						x := tab[uint16(vr[2*i])|uint16(vr[2*i+1])<<8]
						r.acc[i] = ops.RoundF16(ops.RoundF16(r.acc[i]*ms) + float32(x*vs))
					}
				}
			}
			for t := range tile {
				r := &tile[t]
				faFinish(dst, r.acc, sinks, r.S, r.M, r.i1, r.i2, r.i3)
			}
		}
	})
	return true
}

//go:noescape
func faDotsZ4(k unsafe.Pointer, nbk uintptr, nkeys, dk int, q *float32, sc *float32)

//go:noescape
func faAccumZ32(v unsafe.Pointer, nbv uintptr, nkeys int, kind, mode *uint8, fac, acc *float32, accStride int)

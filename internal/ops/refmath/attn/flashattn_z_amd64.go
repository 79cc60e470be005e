package attn

import (
	"sync"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// flash_attn_ext for f16 K and V with the AVX-512 kernels of
// flashattn_amd64.s, in every amd64 build on CPUs with AVX-512F: what
// RefFlashAttn runs first where it fits (d_k and d_v multiples of 32, K
// and V heads broadcast alike). A tile of four query rows that read the
// same K/V head (the query heads of a KV head, for each query position
// in turn) runs in three passes, as flashAttnVec's:
//
//  1. faDotsZ4: the dot products of every key with the tile's rows (q
//     rounded to f16), 16 float32 lanes, each K row read once.
//  2. The online softmax of each row over its scores, scalar, as the
//     scalar loop runs it, but for the exps, which expShiftRow computes
//     in vector lanes where the build has them (expf32's values, but for
//     rare one-ulp differences) and expf32 otherwise.
//  3. faAccumZ32: the f16 accumulators, key by key, 32 columns at a time
//     in registers, with the scalar loop's float32 operations, each
//     rounded to f16 by VCVTPS2PH (RoundF16 for every value but NaN: NaN
//     either way); keys faChunk at a time, each chunk of V rows read
//     from memory once for all its column blocks.
//
// So the result equals the scalar loop's up to the order of the dot
// products' sums (16 lanes here, float64 there) and the exps' last ulp
// (TestFlashAttnZ).

// faZWork is what a worker of flashAttnZ computes in, kept between calls.
type faZWork struct {
	q, sc, fac, acc, ea, mrow []float32
	mode, kind                []uint8
}

var faZWorks = sync.Pool{New: func() any { return new(faZWork) }}

// flashAttnZ runs flash_attn_ext by the AVX-512 kernels and reports
// whether it did; false (nothing written) when the CPU, the types or the
// layout do not fit them.
func (ks *Kernels) flashAttnZ(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	if !ks.FAZ || k.Type != ops.F16 || v.Type != ops.F16 || q.Type != ops.F32 || !rowsInBuf(k) || !rowsInBuf(v) {
		return false
	}
	dk, dv, nkv := q.Ne[0], v.Ne[0], k.Ne[1]
	rk2, rk3 := q.Ne[2]/k.Ne[2], q.Ne[3]/k.Ne[3]
	rv2, rv3 := q.Ne[2]/v.Ne[2], q.Ne[3]/v.Ne[3]
	if dk%32 != 0 || dv%32 != 0 || rk2 != rv2 || rk3 != rv3 {
		return false
	}
	// The rows of one K/V head (ik2, ik3) in tiles (faHeadRow).
	headRows, heads := q.Ne[1]*rk2*rk3, k.Ne[2]*k.Ne[3]
	const tile = 4
	tiles := (headRows + tile - 1) / tile
	n := int(nkv)
	cpu.RefParallel(heads*tiles, tile*nkv*(dk+dv), func(lo, hi int64) {
		wk := faZWorks.Get().(*faZWork)
		defer faZWorks.Put(wk)
		wk.q = cpu.Grow(wk.q, tile*int(dk))
		wk.sc = cpu.Grow(wk.sc, tile*n)
		wk.fac = cpu.Grow(wk.fac, 2*tile*n)
		wk.acc = cpu.Grow(wk.acc, tile*int(dv))
		wk.ea = cpu.Grow(wk.ea, n)
		wk.mode = cpu.Grow(wk.mode, tile*n)
		wk.kind = cpu.Grow(wk.kind, n)
		if mask != nil {
			wk.mrow = cpu.Grow(wk.mrow, n) // the mask row of the row in hand
		}
		qs, sc, fac, acc, ea, mode, kind := wk.q, wk.sc, wk.fac, wk.acc, wk.ea, wk.mode, wk.kind
		var rows [tile][3]int64
		var sums, maxes [tile]float32
		for w := lo; w < hi; w++ {
			head, j0 := w/tiles, (w%tiles)*tile
			nt := int(min(tile, headRows-j0))
			for t := range tile {
				qr := qs[t*int(dk) : (t+1)*int(dk)]
				if t >= nt { // padding rows repeat the first (their results unused)
					copy(qr, qs[:dk])
					continue
				}
				i1, i2, i3 := faHeadRow(q, k, rk2, rk3, head, j0+int64(t))
				rows[t] = [3]int64{i1, i2, i3}
				q.Row(i1, i2, i3, qr)
				for i, x := range qr {
					qr[i] = ops.RoundF16(x)
				}
			}
			ik2, ik3 := rows[0][1]/rk2, rows[0][2]/rk3
			iv2, iv3 := rows[0][1]/rv2, rows[0][2]/rv3
			faDotsZ4(unsafe.Pointer(&k.Buf[k.RowOffset(0, ik2, ik3)]), uintptr(k.Nb[1]), n, int(dk), &qs[0], &sc[0])
			// The online softmax of each row; sc, mode and fac are [key][4].
			for t := range tile {
				if t >= nt {
					for ic := range n {
						mode[tile*ic+t] = 0
					}
					continue
				}
				r := rows[t]
				var mrow []float32
				if mask != nil {
					mrow = wk.mrow
					mask.Row(r[0], r[1]%mask.Ne[2], r[2]%mask.Ne[3], mrow)
				}
				sl := slope(r[1])
				M := ks.faExps(sc[t:], tile, n, mrow, sl, scale, softcap, ea, mode[t:])
				S := float32(0)
				for ic, f := range ea[:n] {
					switch mode[tile*ic+t] {
					case 2: // a new maximum: ms = f, vs = 1
						fac[8*ic+t], fac[8*ic+4+t] = f, 1
						S = float32(S*f) + 1
					case 1:
						fac[8*ic+t], fac[8*ic+4+t] = 1, f
						S += f
					}
				}
				sums[t], maxes[t] = S, M
			}
			for ic := range n {
				kind[ic] = 1
				if mode[tile*ic] == 1 && mode[tile*ic+1] == 1 && mode[tile*ic+2] == 1 && mode[tile*ic+3] == 1 {
					kind[ic] = 0
				}
			}
			// The accumulators, faChunk keys at a time.
			clear(acc)
			vp := unsafe.Pointer(&v.Buf[v.RowOffset(0, iv2, iv3)])
			for c0 := 0; c0 < n; c0 += faChunkZ {
				nc := min(faChunkZ, n-c0)
				vc := unsafe.Add(vp, uintptr(c0)*uintptr(v.Nb[1]))
				for col := 0; col < int(dv); col += 32 {
					faAccumZ32(unsafe.Add(vc, 2*col), uintptr(v.Nb[1]), nc, &kind[c0], &mode[tile*c0], &fac[8*c0], &acc[col], 4*int(dv))
				}
			}
			for t := range nt {
				r := rows[t]
				faFinish(dst, acc[t*int(dv):(t+1)*int(dv)], sinks, sums[t], maxes[t], r[0], r[1], r[2])
			}
		}
	})
	return true
}

// faChunkZ is how many keys flashAttnZ's V pass takes for all its column
// blocks in turn (64 KB of V rows of 128 halves: they stay in L2).
const faChunkZ = 256

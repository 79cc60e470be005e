//go:build goexperiment.simd && amd64

package attn

import (
	"math"
	"simd/archsimd"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// The AVX2 form of flash_attn_ext for f16 K and V (GOEXPERIMENT=simd on
// CPUs with AVX2 and FMA, checked once). It computes what RefFlashAttn's
// scalar loop computes, in three passes per tile of up to faTile query
// rows that read the same K/V head (the query heads of one KV head, for
// each query position in turn), so that each K and V row is widened from
// f16 once per tile instead of once per query row:
//
//  1. The dot products k_j·q of every key with every row of the tile, in
//     eight float32 lanes (lane l sums the elements i ≡ l mod 8, then the
//     lanes are added pairwise), as ggml_vec_dot_f16 accumulates in
//     float32 lanes; the scalar loop sums in float64 instead. Each
//     product of two f16 values is exact in float32, so FMA and a
//     separate multiply and add give the same sums.
//  2. Scalar code (after VZEROUPPER) runs the online softmax over the
//     scores as the scalar loop does: the running maximum M, the factors
//     ms = exp(M_old - M) (a new maximum) and vs = exp(s - M), and the sum
//     S. None of it depends on the accumulator, so it can run before the
//     V pass; the exps of a row run in vector lanes (expShiftRow, which
//     gives expf32's values but for rare one-ulp differences).
//  3. The V pass updates each row's accumulator, key by key, with the
//     float32 operations of the scalar loop (acc·ms rounded to f16 on a new
//     maximum, then acc + v·vs rounded to f16), in vector lanes. The f16
//     rounding is RoundF16's for normal halves (integer arithmetic on the
//     float32 bits, bit-identical); a key whose update produced, in any
//     lane, a value that is not a normal half (a nonzero value below
//     2^-14, an overflow, an infinity or a NaN) is redone by the scalar
//     code from the previous accumulator, kept in a second buffer.
//
// Up to faGroup tiles of the same KV head run passes 1 and 3 together,
// faChunk keys at a time for every tile in turn, so that K and V rows
// come from memory once per group (with n query positions a KV head has
// 4n rows), and the rows of a chunk are touched into the cache in bursts
// (touchRows) before use. The order of the operations of each row does
// not change.
//
// So the result equals the scalar loop's up to the order of the dot
// products' sums (TestFlashAttnVec).

// faTile is the number of query rows that share the K and V rows of a
// pass (the four query heads of a llama-3 KV head).
const faTile = 4

// faRow is one query row: q[:, i1, i2, i3].
type faRow struct{ i1, i2, i3 int64 }

// faGroup is the largest number of tiles that share one pass over a KV
// head's rows, faChunk the number of K or V rows that pass computes with
// for every tile of the group in turn (64 KB of a 128-dim f16 head: they
// stay in the cache meanwhile).
const (
	faGroup = 8
	faChunk = 256
)

// faTileState is what the passes of one tile keep: the tile's f16-rounded
// q rows, scores, softmax factors and accumulators (see flashAttnVec).
type faTileState struct {
	qh, sc      []float32
	msb, vsb    []uint32
	mode        []uint8
	acc         []float32
	cur         [faTile]int // which of the two buffers holds row t's accumulator
	sums, maxes [faTile]float32
}

// faWork is what a worker of flashAttnVec computes in, kept between calls
// (faWorks): 213 KB a tile for 4096 keys, eight tiles a worker at n = 7.
type faWork struct {
	st       []faTileState
	ea, mrow []float32
	scratch  faScratch
}

var faWorks = sync.Pool{New: func() any { return new(faWork) }}

// tiles returns n tile states sized for dk, dv and nkvPad keys. Their
// contents are left from earlier calls: flashAttnVec writes every entry
// it reads (the accumulators it clears).
func (w *faWork) tiles(n, dk, dv, nkvPad int) []faTileState {
	if cap(w.st) < n {
		w.st = append(w.st[:cap(w.st)], make([]faTileState, n-cap(w.st))...)
	}
	st := w.st[:n]
	for i := range st {
		t := &st[i]
		t.qh = cpu.Grow(t.qh, faTile*dk)
		t.sc = cpu.Grow(t.sc, faTile*nkvPad)
		t.msb = cpu.Grow(t.msb, faTile*nkvPad) // bits of ms, vs: see faAccum
		t.vsb = cpu.Grow(t.vsb, faTile*nkvPad)
		t.mode = cpu.Grow(t.mode, faTile*nkvPad)
		t.acc = cpu.Grow(t.acc, 2*faTile*dv)
	}
	return st
}

// flashAttnVec runs flash_attn_ext with the vector kernels and reports
// whether it did; false (nothing written) when the CPU, the types or the
// layout do not fit them, and the caller runs the scalar loop.
func (ks *Kernels) flashAttnVec(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	if !ks.FA || k.Type != ops.F16 || v.Type != ops.F16 || q.Type != ops.F32 {
		return false
	}
	dk, dv, nkv := q.Ne[0], v.Ne[0], k.Ne[1]
	if dk%8 != 0 || dv%8 != 0 || !rowsInBuf(k) || !rowsInBuf(v) {
		return false
	}
	if mask != nil && mask.Type != ops.F16 && mask.Type != ops.F32 {
		return false
	}
	rk2, rk3 := q.Ne[2]/k.Ne[2], q.Ne[3]/k.Ne[3]
	rv2, rv3 := q.Ne[2]/v.Ne[2], q.Ne[3]/v.Ne[3]
	group := int64(1) // query heads per tile that share K and V
	if rk2 == rv2 && rk3 == rv3 {
		group = rk2
	}
	// Tiles of the same K and V heads go in groups of up to faGroup, which
	// read each chunk of K and V rows once from memory (then from the
	// cache) for all their tiles.
	var groups [][][]faRow
	for i3 := int64(0); i3 < q.Ne[3]; i3++ {
		for g := int64(0); g < q.Ne[2]; g += group {
			var tiles [][]faRow
			var t []faRow
			for i1 := int64(0); i1 < q.Ne[1]; i1++ {
				for h := g; h < g+group; h++ {
					if len(t) == faTile {
						tiles = append(tiles, t)
						t = nil
					}
					t = append(t, faRow{i1, h, i3})
				}
			}
			tiles = append(tiles, t)
			for len(tiles) > 0 {
				n := min(len(tiles), faGroup)
				groups = append(groups, tiles[:n])
				tiles = tiles[n:]
			}
		}
	}
	nkvPad := (nkv + 7) &^ 7
	maxTiles := 0
	for _, g := range groups {
		maxTiles = max(maxTiles, len(g))
	}
	cpu.RefParallel(int64(len(groups)), int64(maxTiles)*faTile*nkv*(dk+dv), func(lo, hi int64) {
		wk := faWorks.Get().(*faWork)
		defer faWorks.Put(wk)
		st := wk.tiles(maxTiles, int(dk), int(dv), int(nkvPad))
		wk.ea = cpu.Grow(wk.ea, int(nkv)) // exp arguments of a row
		ea := wk.ea
		scratch := &wk.scratch
		var mrow []float32
		if mask != nil {
			wk.mrow = cpu.Grow(wk.mrow, int(nkv))
			mrow = wk.mrow
		}
		tab := ops.F16ToF32Table()
		for gi := lo; gi < hi; gi++ {
			tiles := groups[gi]
			r0 := tiles[0][0]
			ik2, ik3 := r0.i2/rk2, r0.i3/rk3
			iv2, iv3 := r0.i2/rv2, r0.i3/rv3
			// Pass 1: scores. Rows past nt repeat row 0 (results unused).
			for ti, rows := range tiles {
				qh := st[ti].qh
				for t := 0; t < faTile; t++ {
					r := rows[min(t, len(rows)-1)]
					qr := qh[t*int(dk) : (t+1)*int(dk)]
					q.Row(r.i1, r.i2, r.i3, qr)
					for i, x := range qr {
						qr[i] = ops.RoundF16(x)
					}
				}
			}
			kp := unsafe.Pointer(&k.Buf[k.RowOffset(0, ik2, ik3)])
			for c0 := 0; c0 < int(nkv); c0 += faChunk {
				n := min(faChunk, int(nkv)-c0)
				kc := unsafe.Add(kp, uintptr(c0)*uintptr(k.Nb[1]))
				for ti, rows := range tiles {
					if len(rows) == 1 {
						faDots1(kc, uintptr(k.Nb[1]), n, int(dk), st[ti].qh, st[ti].sc[c0:])
					} else {
						faDots4(kc, uintptr(k.Nb[1]), n, int(dk), int(nkvPad), st[ti].qh, st[ti].sc[c0:])
					}
				}
			}
			ops.ClearUpper()
			// Pass 2: online softmax, scalar.
			for ti, rows := range tiles {
				ts := &st[ti]
				sc, mode, msb, vsb := ts.sc, ts.mode, ts.msb, ts.vsb
				for t, r := range rows {
					if mask != nil {
						mask.Row(r.i1, r.i2%mask.Ne[2], r.i3%mask.Ne[3], mrow)
					}
					sl := slope(r.i2)
					o := t * int(nkvPad)
					M := ks.faExps(sc[o:], 1, int(nkv), mrow, sl, scale, softcap, ea, mode[o:])
					S, e := float32(0), ea[:nkv]
					for ic, f := range e {
						switch mode[o+ic] {
						case 2: // a new maximum: ms = f, vs = 1
							msb[o+ic], vsb[o+ic] = math.Float32bits(f), math.Float32bits(1)
							S = float32(S*f) + 1
						case 1:
							vsb[o+ic] = math.Float32bits(f)
							S += f
						}
					}
					ts.sums[t], ts.maxes[t] = S, M
				}
				for t := len(rows); t < faTile; t++ { // padding rows repeat row 0
					o := t * int(nkvPad)
					copy(mode[o:o+int(nkv)], mode[:nkv])
					copy(msb[o:o+int(nkv)], msb[:nkv])
					copy(vsb[o:o+int(nkv)], vsb[:nkv])
				}
				clear(ts.acc)
				ts.cur = [faTile]int{}
			}
			// Pass 3: the f16 accumulators.
			vp := unsafe.Pointer(&v.Buf[v.RowOffset(0, iv2, iv3)])
			for c0 := 0; c0 < int(nkv); c0 += faChunk {
				c1 := min(c0+faChunk, int(nkv))
				for ti := range tiles {
					ts := &st[ti]
					faAccum(vp, uintptr(v.Nb[1]), c0, c1, int(dv), int(nkvPad), ts.mode, ts.msb, ts.vsb, ts.acc, &ts.cur, scratch, tab)
				}
			}
			ops.ClearUpper()
			for ti, rows := range tiles {
				ts := &st[ti]
				for t, r := range rows {
					acc := ts.acc[(ts.cur[t]*faTile+t)*int(dv) : (ts.cur[t]*faTile+t+1)*int(dv)]
					faFinish(dst, acc, sinks, ts.sums[t], ts.maxes[t], r.i1, r.i2, r.i3)
				}
			}
		}
	})
	return true
}

// hsumF32x8x8 returns the lane sums of p0..p7, in order, as one vector:
// lane l of the result is ((p_l[0]+p_l[1])+(p_l[2]+p_l[3])) +
// ((p_l[4]+p_l[5])+(p_l[6]+p_l[7])).
func hsumF32x8x8(p0, p1, p2, p3, p4, p5, p6, p7 archsimd.Float32x8) archsimd.Float32x8 {
	a := p0.AddPairsGrouped(p1).AddPairsGrouped(p2.AddPairsGrouped(p3))
	b := p4.AddPairsGrouped(p5).AddPairsGrouped(p6.AddPairsGrouped(p7))
	return a.Select128FromPair(0, 2, b).Add(a.Select128FromPair(1, 3, b))
}

// faDots1 stores the float32 dot products of the nkv f16 rows at kp
// (nbk1 bytes apart, dk values each) with q[:dk] in sc[:nkv rounded up to
// 8] (the entries past nkv repeat the last key).
func faDots1(kp unsafe.Pointer, nbk1 uintptr, nkv, dk int, q, sc []float32) {
	q = q[:dk]
	sc = sc[:(nkv+7)&^7]
	keep, expo, inf, sc16 := cpu.F16Consts()
	pq := unsafe.Pointer(&q[0])
	var blk [8]archsimd.Float32x8
	var touched uint8
	for j0 := 0; j0 < nkv; j0 += 8 {
		if j0%faTouch == 0 {
			touched ^= touchRows(kp, nbk1, j0, min(j0+faTouch, nkv), uintptr(2*dk))
		}
		for jj := range blk {
			kr := unsafe.Add(kp, uintptr(min(j0+jj, nkv-1))*nbk1)
			var a archsimd.Float32x8
			for i := 0; i < dk; i += 8 {
				a = cpu.WidenF16x8(kr, 2*i, keep, expo, inf, sc16).MulAdd(cpu.LoadF32x8(pq, 4*i), a)
			}
			blk[jj] = a
		}
		hsumF32x8x8(blk[0], blk[1], blk[2], blk[3], blk[4], blk[5], blk[6], blk[7]).Store((*[8]float32)(sc[j0 : j0+8]))
	}
	faSink.Store(uint32(touched))
}

// faDots4 is faDots1 for the four query rows q[t*dk:(t+1)*dk], whose
// scores go to sc[t*stride:], reading each key row once.
func faDots4(kp unsafe.Pointer, nbk1 uintptr, nkv, dk, stride int, q, sc []float32) {
	q = q[:4*dk]
	if stride < (nkv+7)&^7 {
		panic("ops: faDots4 stride")
	}
	sc = sc[:3*stride+(nkv+7)&^7]
	keep, expo, inf, sc16 := cpu.F16Consts()
	p0 := unsafe.Pointer(&q[0])
	p1, p2, p3 := unsafe.Add(p0, 4*dk), unsafe.Add(p0, 8*dk), unsafe.Add(p0, 12*dk)
	var blk [4][8]archsimd.Float32x8
	var touched uint8
	rowBytes := uintptr(2 * dk)
	for j0 := 0; j0 < nkv; j0 += 8 {
		if j0%faTouch == 0 {
			touched ^= touchRows(kp, nbk1, j0, min(j0+faTouch, nkv), rowBytes)
		}
		for jj := 0; jj < 8; jj++ {
			kr := unsafe.Add(kp, uintptr(min(j0+jj, nkv-1))*nbk1)
			var a0, a1, a2, a3 archsimd.Float32x8
			for i := 0; i < dk; i += 8 {
				x := cpu.WidenF16x8(kr, 2*i, keep, expo, inf, sc16)
				a0 = x.MulAdd(cpu.LoadF32x8(p0, 4*i), a0)
				a1 = x.MulAdd(cpu.LoadF32x8(p1, 4*i), a1)
				a2 = x.MulAdd(cpu.LoadF32x8(p2, 4*i), a2)
				a3 = x.MulAdd(cpu.LoadF32x8(p3, 4*i), a3)
			}
			blk[0][jj], blk[1][jj], blk[2][jj], blk[3][jj] = a0, a1, a2, a3
		}
		for t := range blk {
			b := &blk[t]
			o := t*stride + j0
			hsumF32x8x8(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]).Store((*[8]float32)(sc[o : o+8]))
		}
	}
	faSink.Store(uint32(touched))
}

// faTouch is the number of K or V rows that faDots4 and faAccum read
// into the cache in one burst (touchRows) before they compute with them.
const faTouch = 64

// faSink keeps the bytes that touchRows reads (atomically: the goroutines
// of refParallel all store there).
var faSink atomic.Uint32

// touchRows reads one byte of every 64-byte line of rows j0..j1-1 of n
// bytes each, nb bytes apart, at p: independent loads that bring the rows
// of a KV-cache view (one head's 256 bytes of each 2048-byte row, which
// the hardware prefetchers do not follow) into the cache together,
// instead of one row's latency at a time while computing.
func touchRows(p unsafe.Pointer, nb uintptr, j0, j1 int, n uintptr) uint8 {
	var x uint8
	for j := j0; j < j1; j++ {
		x ^= touchBytes(unsafe.Add(p, uintptr(j)*nb), n)
	}
	return x
}

// touchBytes reads one byte of each 64-byte line of the n bytes at p.
func touchBytes(p unsafe.Pointer, n uintptr) uint8 {
	var x uint8
	for o := uintptr(0); o < n; o += 64 {
		x ^= *(*uint8)(unsafe.Add(p, o))
	}
	return x ^ *(*uint8)(unsafe.Add(p, n-1))
}

func roundF16Consts() (lsb, half, hiMask archsimd.Int32x8) {
	b := archsimd.BroadcastInt32x8
	return b(1), b(0xfff), b(-0x2000)
}

// roundF16x8Max is RoundF16 of the lanes of x whose result is a normal
// half (integer arithmetic on the float32 bits; the other lanes' values
// are wrong: nonzero |x| < 2^-14, |x| that rounds to 65536 or more,
// infinities and NaNs, and zeros, which happen to be right). It
// flags them through a running maximum: it
// returns max(worst, (x<<1) + lo2) lane by lane (the bits of x, the sign
// shifted out, wrapping), which stays <= lim2 (normalF16Consts) while
// every x so far had 2^-14 <= |x| < 65520 (bits 0x38800000 to
// 0x477fefff, so x<<1 from 0x71000000 to 0x8effdffe, which lo2 maps to
// the lowest int32 values and nothing else there).
func roundF16x8Max(x archsimd.Float32x8, lsb, half, hiMask, lo2, worst archsimd.Int32x8) (archsimd.Float32x8, archsimd.Int32x8) {
	b := x.AsInt32x8()
	r := b.Add(half).Add(b.ShiftAllRight(13).And(lsb)).And(hiMask)
	return r.AsFloat32x8(), worst.Max(b.ShiftAllLeft(1).Add(lo2))
}

func normalF16Consts() (lo2, lim2 archsimd.Int32x8) {
	b := archsimd.BroadcastInt32x8
	return b(0x0f000000), b(-0x80000000 + 0x1dffdffe)
}

// faAccum runs pass 3 over the f16 V rows j0..j1-1 at vp (nbv1 bytes
// apart, dv values each) for the faTile rows of a tile: for key j and row
// t, mode[t*stride+j] is 0 (masked out: no update), 1 (acc += v·vs,
// rounded) or 2 (a new maximum: acc = round(acc·ms), then acc += v·vs,
// rounded), with the bits of ms and vs in msb and vsb. Row t's
// accumulator is acc[(cur[t]*faTile+t)*dv:][:dv]; each update writes the
// other buffer and flips cur[t]. Runs of keys that are plain updates
// (mode 1) for every row go through faAccumRun, with the accumulators in
// registers; the other keys one at a time through faAccumKey. Calls for
// consecutive ranges continue the same updates.
func faAccum(vp unsafe.Pointer, nbv1 uintptr, j0, j1, dv, stride int, mode []uint8, msb, vsb []uint32, acc []float32, cur *[faTile]int, scratch *faScratch, tab *[1 << 16]float32) {
	mode, msb, vsb = mode[:faTile*stride], msb[:faTile*stride], vsb[:faTile*stride]
	acc = acc[:2*faTile*dv]
	if j0 < 0 || j1 > stride {
		panic("ops: faAccum sizes")
	}
	vw, vb := scratch.buffers(dv)
	var touched uint8
	next := j0 // rows below next have been touched
	for j := j0; j < j1; {
		if j >= next {
			touched ^= touchRows(vp, nbv1, j, min(j+faTouch, j1), uintptr(2*dv))
			next = j + faTouch
		}
		n := 0
		for j+n < j1 && n < faMaxRun && mode[j+n] == 1 && mode[stride+j+n] == 1 && mode[2*stride+j+n] == 1 && mode[3*stride+j+n] == 1 {
			n++
		}
		if n > 0 {
			faAccumRun(vp, nbv1, j, n, dv, stride, vsb, acc, cur, vw, vb, tab)
			j += n
			continue
		}
		faAccumKey(vp, nbv1, j, dv, stride, mode, msb, vsb, acc, cur, tab)
		j++
	}
	faSink.Store(uint32(touched))
}

// faMaxRun is the most keys that faAccumRun takes at once.
const faMaxRun = 32

// faScratch holds faAccum's buffers: the V rows of a run, widened, and its
// factors vs, broadcast.
type faScratch struct{ vw, vb []float32 }

func (s *faScratch) buffers(dv int) (vw, vb []float32) {
	if len(s.vw) < faMaxRun*dv {
		s.vw = make([]float32, faMaxRun*dv)
		s.vb = make([]float32, faMaxRun*faTile*8)
	}
	return s.vw, s.vb
}

// faAccumRun is faAccum for keys j0..j0+n-1, each a plain update of every
// row: per eight lanes of the accumulators, all n keys are added in
// registers; the run is redone by scalar code if any rounding was not of
// a normal half.
func faAccumRun(vp unsafe.Pointer, nbv1 uintptr, j0, n, dv, stride int, vsb []uint32, acc []float32, cur *[faTile]int, vw, vb []float32, tab *[1 << 16]float32) {
	vw = vw[:n*dv]
	// The V rows of the run, widened once (fewer live constants below).
	keep, expo, inf, sc16 := cpu.F16Consts()
	pw := unsafe.Pointer(&vw[0])
	for j := 0; j < n; j++ {
		vr := unsafe.Add(vp, uintptr(j0+j)*nbv1)
		for c := 0; c < dv; c += 8 {
			cpu.WidenF16x8(vr, 2*c, keep, expo, inf, sc16).Store((*[8]float32)(unsafe.Add(pw, 4*(j*dv+c))))
		}
	}
	// The factors vs of the run, broadcast once: vb[j*faTile+t] is row t's
	// for key j0+j.
	vb = vb[:n*faTile*8]
	pb := unsafe.Pointer(&vb[0])
	for j := 0; j < n; j++ {
		for t := 0; t < faTile; t++ {
			archsimd.BroadcastInt32x8(int32(vsb[t*stride+j0+j])).AsFloat32x8().Store((*[8]float32)(unsafe.Add(pb, 4*8*(j*faTile+t))))
		}
	}
	lsb, half, hiMask := roundF16Consts()
	lo2, lim2 := normalF16Consts()
	base := unsafe.Pointer(&acc[0])
	s0 := unsafe.Add(base, 4*(cur[0]*faTile+0)*dv)
	s1 := unsafe.Add(base, 4*(cur[1]*faTile+1)*dv)
	s2 := unsafe.Add(base, 4*(cur[2]*faTile+2)*dv)
	s3 := unsafe.Add(base, 4*(cur[3]*faTile+3)*dv)
	d0 := unsafe.Add(base, 4*((1-cur[0])*faTile+0)*dv)
	d1 := unsafe.Add(base, 4*((1-cur[1])*faTile+1)*dv)
	d2 := unsafe.Add(base, 4*((1-cur[2])*faTile+2)*dv)
	d3 := unsafe.Add(base, 4*((1-cur[3])*faTile+3)*dv)
	for c := 0; c < dv; c += 8 {
		a0, a1, a2, a3 := cpu.LoadF32x8(s0, 4*c), cpu.LoadF32x8(s1, 4*c), cpu.LoadF32x8(s2, 4*c), cpu.LoadF32x8(s3, 4*c)
		worst := archsimd.BroadcastInt32x8(math.MinInt32)
		for j := 0; j < n; j++ {
			// No pointer past the buffers' ends (checkptr).
			w := cpu.LoadF32x8(pw, 4*(j*dv+c))
			pj := unsafe.Add(pb, 4*8*faTile*j)
			a0, worst = roundF16x8Max(a0.Add(w.Mul(cpu.LoadF32x8(pj, 0))), lsb, half, hiMask, lo2, worst)
			a1, worst = roundF16x8Max(a1.Add(w.Mul(cpu.LoadF32x8(pj, 32))), lsb, half, hiMask, lo2, worst)
			a2, worst = roundF16x8Max(a2.Add(w.Mul(cpu.LoadF32x8(pj, 64))), lsb, half, hiMask, lo2, worst)
			a3, worst = roundF16x8Max(a3.Add(w.Mul(cpu.LoadF32x8(pj, 96))), lsb, half, hiMask, lo2, worst)
		}
		a0.Store((*[8]float32)(unsafe.Add(d0, 4*c)))
		a1.Store((*[8]float32)(unsafe.Add(d1, 4*c)))
		a2.Store((*[8]float32)(unsafe.Add(d2, 4*c)))
		a3.Store((*[8]float32)(unsafe.Add(d3, 4*c)))
		bad := worst.Greater(lim2)
		if bad.ToBits() != 0 {
			// Redo these eight lanes of the four rows in scalar code.
			archsimd.ClearAVXUpperBits()
			src := [faTile]unsafe.Pointer{s0, s1, s2, s3}
			dst := [faTile]unsafe.Pointer{d0, d1, d2, d3}
			for t := range faTile {
				out := (*[8]float32)(unsafe.Add(dst[t], 4*c))
				*out = *(*[8]float32)(unsafe.Add(src[t], 4*c))
				for j := j0; j < j0+n; j++ {
					vh := (*[8]uint16)(unsafe.Add(vp, uintptr(j)*nbv1+2*uintptr(c)))
					vs := math.Float32frombits(vsb[t*stride+j])
					for i := range out {
						out[i] = ops.RoundF16(out[i] + float32(tab[vh[i]]*vs))
					}
				}
			}
		}
	}
	for t := range cur {
		cur[t] ^= 1
	}
}

// faAccumKey is faAccum for the one key j, any modes.
func faAccumKey(vp unsafe.Pointer, nbv1 uintptr, j, dv, stride int, mode []uint8, msb, vsb []uint32, acc []float32, cur *[faTile]int, tab *[1 << 16]float32) {
	keep, expo, inf, sc16 := cpu.F16Consts()
	lsb, half, hiMask := roundF16Consts()
	lo2, lim2 := normalF16Consts()
	base := unsafe.Pointer(&acc[0])
	vr := unsafe.Add(vp, uintptr(j)*nbv1)
	worst := archsimd.BroadcastInt32x8(math.MinInt32)
	for t := range faTile {
		o := t*stride + j
		m := mode[o]
		if m == 0 {
			continue
		}
		ms := archsimd.BroadcastInt32x8(int32(msb[o])).AsFloat32x8()
		vs := archsimd.BroadcastInt32x8(int32(vsb[o])).AsFloat32x8()
		src := unsafe.Add(base, 4*(cur[t]*faTile+t)*dv)
		dst := unsafe.Add(base, 4*((1-cur[t])*faTile+t)*dv)
		for c := 0; c < dv; c += 8 {
			w := cpu.WidenF16x8(vr, 2*c, keep, expo, inf, sc16)
			x := cpu.LoadF32x8(src, 4*c)
			if m == 2 {
				x, worst = roundF16x8Max(x.Mul(ms), lsb, half, hiMask, lo2, worst)
			}
			x, worst = roundF16x8Max(x.Add(w.Mul(vs)), lsb, half, hiMask, lo2, worst)
			x.Store((*[8]float32)(unsafe.Add(dst, 4*c)))
		}
	}
	if worst.Greater(lim2).ToBits() != 0 {
		archsimd.ClearAVXUpperBits()
		vh := unsafe.Slice((*uint16)(vr), dv)
		for t := range faTile {
			o := t*stride + j
			m := mode[o]
			if m == 0 {
				continue
			}
			in := unsafe.Slice((*float32)(unsafe.Add(base, 4*(cur[t]*faTile+t)*dv)), dv)
			out := unsafe.Slice((*float32)(unsafe.Add(base, 4*((1-cur[t])*faTile+t)*dv)), dv)
			ms := math.Float32frombits(msb[o])
			vs := math.Float32frombits(vsb[o])
			for i := range out {
				a := in[i]
				if m == 2 {
					a = ops.RoundF16(a * ms)
				}
				out[i] = ops.RoundF16(a + float32(tab[vh[i]]*vs))
			}
		}
	}
	for t := range faTile {
		if mode[t*stride+j] != 0 {
			cur[t] ^= 1
		}
	}
}

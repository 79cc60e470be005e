package mulmat

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// ggml's CPU backend computes MUL_MAT of f32 and f16 weights by
// llamafile's tinyBLAS (ggml-cpu/llamafile/sgemm.cpp) when src1 has at
// least two columns, k is a multiple of 16 and m of 4 (and, for f32, src1
// is contiguous); f16 weights take src1 rounded to f16. In its AVX-512
// build each (row, column) dot product is one 16-lane vector: lane j sums
// the products of the elements i ≡ j (mod 16) in order by a fused
// multiply-add, and the lanes are reduced by _mm512_reduce_add_ps.
// MulMat computes those shapes in the same order (sgemmOrder): by the
// register tiles of mulmat_sgemm_amd64.s where the CPU has AVX-512 or
// AVX2 and FMA (in every amd64 build), else by sgemmDot, their scalar
// twin; the results are ggml's bits either way. Other shapes keep the
// kernels of mulmat.go.

// sgemmOrder reports whether ggml's CPU computes ggml_mul_mat(a, b) by
// tinyBLAS (llamafile_sgemm's conditions in ggml_compute_forward_mul_mat).
func sgemmOrder(a, b *ops.Tensor) bool {
	if b.Ne[1] < 2 || a.Ne[0]%16 != 0 || a.Ne[1]%4 != 0 {
		return false
	}
	switch {
	case a.Type == ops.F32 && b.Type == ops.F32, a.Type == ops.F16 && b.Type == ops.F16:
		return b.IsContiguous() // else ggml falls back to ggml_vec_dot
	case a.Type == ops.F16 && b.Type == ops.F32:
		return true // converted to f16, contiguous, first
	}
	return false
}

// sgemmTiles reports whether sgemmTile runs the register tiles (in every
// amd64 build) for activations of k values; vec false in a build with the
// other vector kernels is a test asking for the scalar ones.
func (ks *Kernels) sgemmTiles(vec bool, k int) bool {
	return ks.SgemmR != 0 && (vec || !ks.Vec) && k != 0
}

// sgemmHalves reports whether MulMat gives sgemmTile the activations of
// weights of type t (in tinyBLAS's order) as halves (actRows.h) rather
// than float32: f16 weights with the AVX-512 tiles where the CPU gains by
// it (Kernels.F16Halves), whose f16 kernels widen them as they load them
// (as tinyBLAS does with its f16 activations). Half the bytes stay in L2.
func (ks *Kernels) sgemmHalves(t ops.Type, vec bool, k int) bool {
	return t == ops.F16 && ks.SgemmC == 4 && ks.F16Halves && ks.sgemmTiles(vec, k)
}

// sgemmWhole reports whether sgemmTile runs tinyBLAS's own loop, each
// kernel call over all of k (f32 weights against up to sgemmVecC columns,
// f16 ones against up to sgemmWholeF16), rather than k in chunks.
func (ks *Kernels) sgemmWhole(t ops.Type, n int) bool {
	return n <= ks.SgemmC || t == ops.F16 && n <= sgemmWholeF16
}

// sgemmWholeF16 is the most columns f16 weights take in whole-k kernel
// calls: beyond it the columns (4·k bytes each, 57 KB at k = 14336) no
// longer stay in L2 while every four rows pass over them, and k goes in
// chunks as for f32 weights (Zen 5, n = 32: 23 -> 16-18 ms).
const sgemmWholeF16 = 8

// sgemmRowBlock is how many weight rows a work item of the chunked loop
// takes: each chunk of the columns is read from L3 once per work item, so
// that at n = 32 (1.8 MB of f32 columns) 16 rows read four times more
// activation bytes than weight bytes.
const sgemmRowBlock = 64

// sgemmItemRows is how many rows a work item of MulMat passes to
// sgemmTile.
func (ks *Kernels) sgemmItemRows(t ops.Type, n int) int {
	if ks.sgemmWhole(t, n) {
		return mulMatRowTile
	}
	return sgemmRowBlock
}

// sgemmTile computes the dot products of rows r0..r1-1 (rowAt; f32, or
// f16 when t == F16; r1-r0 a multiple of 4, ≤ sgemmRowBlock) with the n
// activation rows from base on in tinyBLAS's order, calling put(i01, c, v)
// for row i01 and column c. next is the first of the next four rows to be
// computed after these (nil for none). The 16-lane sums are kept in
// memory between kernel calls (exactly).
func (ft *floatTile) sgemmTile(act *actRows, t ops.Type, rowAt func(int) []byte, next []byte, r0, r1, base, n int, put func(i01, i11 int, v float32)) {
	ks := act.ks
	k := act.k
	nr := r1 - r0
	var y []float32
	var yh []uint16 // the activations as halves (sgemmHalves)
	if act.h != nil {
		yh = act.h[base*k : (base+n)*k]
	} else {
		y = act.f32[base*k : (base+n)*k]
	}
	var rows [sgemmRowBlock][]byte
	esz := 4
	if t == ops.F16 {
		esz = 2
	}
	for i := range nr {
		rows[i] = rowAt(r0 + i)[:esz*k]
	}
	if !ks.sgemmTiles(act.vec, k) {
		for i := range nr {
			for c := range n {
				put(r0+i, c, sgemmDot(t, rows[i], y[c*k:(c+1)*k]))
			}
		}
		return
	}
	size := nr * n * 16
	if cap(ft.acc) < size {
		ft.acc = make([]float32, size)
	}
	acc := ft.acc[:size]
	clear(acc)
	pacc := unsafe.Pointer(&acc[0])
	rs := 64 * n // bytes from one row's sums to the next's
	// The kernels of the last column group (one to three columns; f16,
	// or f32 when each row is read whole) prefetch the four rows after
	// their own to L2, when the rows lie back to back: within the tile,
	// then the next tile's (next, from the caller). The memory then
	// streams on while the other column groups read the rows from L2.
	// f16 n = 7 8.2 -> 6.7 ms, n = 2 4.6 -> 4.3; f32 n = 2 9.1 -> 8.7.
	// whole: each kernel call takes all of k (tinyBLAS's loop, below).
	whole := ks.sgemmWhole(t, n)
	var after [sgemmRowBlock / 4]unsafe.Pointer
	if rb := uintptr(esz * k); whole && ks.SgemmC == 4 && uintptr(unsafe.Pointer(&rows[1][0]))-uintptr(unsafe.Pointer(&rows[0][0])) == rb {
		for i := 4; i < nr; i += 4 {
			after[i/4-1] = unsafe.Pointer(&rows[i][0])
		}
		if len(next) > 0 && uintptr(unsafe.Pointer(&next[0]))-uintptr(unsafe.Pointer(&rows[nr-1][0])) == rb {
			after[nr/4-1] = unsafe.Pointer(&next[0])
		}
	}
	kern := func(i, c, k0, kc int) {
		nc := min(ks.SgemmC, n-c)
		var ws, xs [4]unsafe.Pointer
		for j := range ks.SgemmR {
			ws[j] = unsafe.Pointer(&rows[i+j][esz*k0])
		}
		for j := range nc {
			if yh != nil {
				xs[j] = unsafe.Pointer(&yh[(c+j)*k+k0])
			} else {
				xs[j] = unsafe.Pointer(&y[(c+j)*k+k0])
			}
		}
		if c+nc == n && nc < 4 {
			xs[3] = after[i/4]
		}
		ks.sgemmKernel(t == ops.F16, yh != nil, &ws, &xs, nc, unsafe.Add(pacc, 64*(i*n+c)), rs, kc)
	}
	if whole {
		// tinyBLAS's own loop: each group of rows against every group
		// of columns over all of k, so that the rows (four f16 rows of
		// 28 KB at k = 14336) are read from memory once and from L2 for
		// the other column groups. For f16 weights this beat chunks of k
		// (f16 n = 7: median 8.9 -> 8.0 ms; n = 32 no worse).
		for i := 0; i < nr; i += ks.SgemmR {
			for c := 0; c < n; c += ks.SgemmC {
				kern(i, c, 0, k)
			}
		}
	} else {
		// f32 weights: k in chunks of fTileK, a chunk of the columns
		// staying in the cache while the tile's rows stream past.
		for k0 := 0; k0 < k; k0 += fTileK {
			kc := min(fTileK, k-k0)
			for c := 0; c < n; c += ks.SgemmC {
				for i := 0; i < nr; i += ks.SgemmR {
					kern(i, c, k0, kc)
				}
			}
		}
	}
	for i := range nr {
		for c := range n {
			put(r0+i, c, cpu.Reduce16((*[16]float32)(acc[16*(i*n+c):])))
		}
	}
}

// sgemmDot is tinyBLAS's dot product of a weight row (little-endian f32,
// or f16 when t == F16, widened exactly) with activations y, len(y) a
// multiple of 16.
func sgemmDot(t ops.Type, row []byte, y []float32) float32 {
	var s [16]float32
	tab := ops.F16ToF32Table()
	for i := 0; i+16 <= len(y); i += 16 {
		for j := range s {
			var w float32
			if t == ops.F16 {
				w = tab[binary.LittleEndian.Uint16(row[2*(i+j):])]
			} else {
				w = cpu.F32At(row, i+j)
			}
			s[j] = fmaLane(w, y[i+j], s[j])
		}
	}
	return cpu.Reduce16(&s)
}

// fmaF32 is x·y + z rounded once to float32, as C's fmaf and each lane of
// VFMADD231PS compute it. x·y is exact in float64 and x·y + z rounded to
// float64 is then within half a float64 ulp of the exact value; rounding
// that to float32 is the correct result unless it lies exactly halfway
// between two float32s while the exact value does not, which the exact
// error of the float64 sum (Knuth's TwoSum) then decides.
func fmaF32(x, y, z float32) float32 {
	xy := float64(x) * float64(y)
	zz := float64(z)
	r := xy + zz
	f := float32(r)
	// The usual case: r in float32's normal range (biased float64
	// exponent 897-1150) and not halfway between two float32s (the 29
	// mantissa bits float32 drops are not exactly 1 followed by zeros).
	// Every float32 midpoint there is a float64, so the exact value lies
	// on r's side of it and rounds as r does.
	b := math.Float64bits(r)
	if e := b >> 52 & 0x7ff; e >= 897 && e <= 1150 && b&(1<<29-1) != 1<<28 {
		return f
	}
	if float64(f) == r || math.IsNaN(r) || math.IsInf(r, 0) {
		return f
	}
	// g: f's neighbour on r's other side; mid: their midpoint.
	var g float32
	ff := float64(f)
	if math.IsInf(ff, 0) { // rounded up past MaxFloat32: the boundary is 2^128
		ff = math.Copysign(0x1p128, ff)
	}
	if ff > r {
		g = math.Nextafter32(f, float32(math.Inf(-1)))
	} else {
		g = math.Nextafter32(f, float32(math.Inf(1)))
	}
	gg := float64(g)
	if math.IsInf(gg, 0) {
		gg = math.Copysign(0x1p128, gg)
	}
	if (ff+gg)/2 != r {
		return f
	}
	bv := r - xy
	err := (xy - (r - bv)) + (zz - bv)
	if err == 0 {
		return f // a true tie: float32(r) rounded it to even
	}
	if (err > 0) == (gg > ff) {
		return g
	}
	return f
}

package mulmat

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// Register tiles of the f32 and f16 MulMat with the vector kernels
// (mulmat_ftile_simd_amd64.go), for several columns: two weight rows
// against three activation rows, or three against two (or four against
// one), per pass, so that six (or four) independent chains of adds run at
// once; on CPUs with AVX-512, four rows against up to four columns, in
// assembly with sixteen chains (mulmat_tile4_amd64.s). Each (row, column) dot product keeps its own eight running lane
// sums, lane j summing the elements i ≡ j (mod 8) in order with a
// multiply and a separate add, as dotF32Vec and dotF16Vec do; the tail
// goes to lane 0 and the lanes are reduced by finish8. The results are
// therefore bit-identical to those kernels', and to the scalar
// single-column ones (dotF32Bytes, dotF16Bytes). k is taken in chunks,
// the running sums kept in memory between chunks, so that a chunk of the
// tile's weights (widened to f32 once, for f16, four rows side by side)
// and of the activations stay in the caches for all the columns.

// fTileK (f32 weights) and fTileK16 (f16 weights) are how many values of
// k one pass over a tile takes: the activations' part of a pass stays in
// the cache for all the tile's rows, and each row is read in runs of 4 or
// 8 KB.
const (
	fTileK   = 2048
	fTileK16 = 4096
)

// floatTile is the scratch space of mulTile.
type floatTile struct {
	wide []float32 // f16: the tile's rows in the current chunk, widened, fTileK per row
	acc  []float32 // the running lane sums, eight per (row, column)
}

// floatTiles keeps the tiles' scratch space (256 KB for f16 weights)
// between work items and calls.
var floatTiles = sync.Pool{New: func() any { return new(floatTile) }}

// mulTile computes the dot products of the rows r0..r1-1 (rowAt; f32, or
// f16 when t == F16; r1-r0 ≤ mulMatRowTile) with the n activation rows
// from base on, calling put(i01, c, v) for row i01 and column c (only with
// the vector kernels, on little-endian amd64).
func (ft *floatTile) mulTile(act *actRows, t ops.Type, rowAt func(int) []byte, r0, r1, base, n int, put func(i01, i11 int, v float32)) {
	ks := act.ks
	if t == ops.F16 && ks.F16Dot {
		ft.mulTileF16C(act, rowAt, r0, r1, base, n, put)
		return
	}
	k := act.k
	k8 := k &^ 7
	nr := r1 - r0
	nrp := nr + 3 // rows with the kernels' padding: copies of the last one
	size := nrp * n * 8
	if cap(ft.acc) < size {
		ft.acc = make([]float32, size)
	}
	acc := ft.acc[:size]
	clear(acc)
	var rows [mulMatRowTile][]byte
	esz := 4
	if t == ops.F16 {
		esz = 2
		if cap(ft.wide) < nr*fTileK16 {
			ft.wide = make([]float32, mulMatRowTile*fTileK16)
		}
	}
	for i := range nr {
		rows[i] = rowAt(r0 + i)[:esz*k]
	}
	y := act.f32[base*k : (base+n)*k]
	if k8 > 0 {
		pacc := unsafe.Pointer(&acc[0])
		rs := 32 * n // bytes from one row's sums to the next's
		var w [mulMatRowTile + 3]unsafe.Pointer
		chunk := fTileK
		if t == ops.F16 {
			chunk = fTileK16
		}
		for k0 := 0; k0 < k8; k0 += chunk {
			kc := min(chunk, k8-k0)
			for i := range nr {
				if t == ops.F16 {
					w[i] = unsafe.Pointer(&ft.wide[i*chunk])
				} else {
					w[i] = unsafe.Pointer(&rows[i][4*k0])
				}
			}
			if t == ops.F16 {
				i := 0
				for ; i+4 <= nr; i += 4 {
					var src [4]unsafe.Pointer
					for j := range src {
						src[j] = unsafe.Pointer(&rows[i+j][2*k0])
					}
					widenF16s4Vec(&src, (*[4]unsafe.Pointer)(w[i:i+4]), kc)
				}
				for ; i < nr; i++ {
					h := rows[i][2*k0 : 2*(k0+kc)]
					ks.widenF16sVec(unsafe.Slice((*uint16)(unsafe.Pointer(&h[0])), kc), ft.wide[i*chunk:i*chunk+kc])
				}
			}
			for i := nr; i < nrp; i++ {
				w[i] = w[nr-1]
			}
			x := func(c int) unsafe.Pointer { return unsafe.Pointer(&y[c*k+k0]) }
			sums := func(i, c int) unsafe.Pointer { return unsafe.Add(pacc, 32*(i*n+c)) }
			c := 0
			if ks.Tile4 {
				// Four rows against up to four columns a pass: the
				// columns' chunk stays in L1 while the tile's weight rows
				// stream from L2.
				for ; c < n; c += 4 {
					var xs [4]unsafe.Pointer
					for j := range min(4, n-c) {
						xs[j] = x(c + j)
					}
					for i := 0; i < nr; i += 4 {
						ws, s := (*[4]unsafe.Pointer)(w[i:i+4]), sums(i, c)
						switch n - c {
						case 1:
							f32Tile4x1(ws[0], ws[1], ws[2], ws[3], xs[0], s, rs, kc)
						case 2:
							f32Tile4x2(ws, &xs, s, rs, kc)
						case 3:
							f32Tile4x3(ws, &xs, s, rs, kc)
						default:
							f32Tile4x4(ws, &xs, s, rs, kc)
						}
					}
				}
			}
			for ; c+3 <= n; c += 3 {
				for i := 0; i < nr; i += 2 {
					f32Tile2x3(w[i], w[i+1], x(c), x(c+1), x(c+2), sums(i, c), rs, kc)
				}
			}
			switch n - c {
			case 2:
				for i := 0; i < nr; i += 3 {
					f32Tile3x2(w[i], w[i+1], w[i+2], x(c), x(c+1), sums(i, c), rs, kc)
				}
			case 1:
				for i := 0; i < nr; i += 4 {
					f32Tile4x1(w[i], w[i+1], w[i+2], w[i+3], x(c), sums(i, c), rs, kc)
				}
			}
		}
	}
	finishTile(t, rows[:nr], acc, y, k, r0, n, put)
}

// finishTile adds the values of k past the last multiple of 8 into lane 0
// of each row's and column's eight running sums in acc (as dotF32 adds
// its tail) and puts their reductions.
func finishTile(t ops.Type, rows [][]byte, acc, y []float32, k, r0, n int, put func(i01, i11 int, v float32)) {
	k8 := k &^ 7
	tab := ops.F16ToF32Table()
	for i, row := range rows {
		for c := range n {
			s := (*[8]float32)(acc[8*(i*n+c) : 8*(i*n+c)+8])
			yc := y[c*k : (c+1)*k]
			for j := k8; j < k; j++ {
				var v float32
				if t == ops.F16 {
					v = tab[binary.LittleEndian.Uint16(row[2*j:])]
				} else {
					v = cpu.F32At(row, j)
				}
				s[0] += float32(v * yc[j])
			}
			put(r0+i, c, cpu.Finish8(s))
		}
	}
}

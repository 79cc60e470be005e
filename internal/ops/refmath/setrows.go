package refmath

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/parallel"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// setRowsSplit is the number of values from which f32 rows into an f16
// destination are converted on two goroutines (rows of 256 values or
// more, each named once), as ggml's threads split the rows: at 32 rows
// of 1024 (the llama KV cache) 2.9 -> 2.3 µs a launch; at 7 rows the
// pool's dispatch costs more than it saves.
const setRowsSplit = 16384

// distinctRows reports whether idx[0..n-1] names n different rows of
// dst's rows, so that they can be written in any order (a row named
// twice keeps the later source row, as written one by one): by a bitmap
// up to 4096 rows (the llama KV cache), else by sorting.
func distinctRows(idx *ops.Tensor, n, rows int64) bool {
	if rows <= 4096 {
		var seen [4096 / 64]uint64
		at := idxRowsAt(idx, 0, 0)
		for i := range n {
			r := at.row(i)
			if seen[r/64]&(1<<(r%64)) != 0 {
				return false
			}
			seen[r/64] |= 1 << (r % 64)
		}
		return true
	}
	at := idxRowsAt(idx, 0, 0)
	r := make([]int64, n)
	for i := range r {
		r[i] = at.row(int64(i))
	}
	slices.Sort(r)
	for i := 1; i < len(r); i++ {
		if r[i] == r[i-1] {
			return false
		}
	}
	return true
}

func (ks *Kernels) refSetRows(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	d, s, idx := srcs[0], srcs[1], srcs[2]
	for k := range s.Ne[3] {
		for j := range s.Ne[2] {
			at := idxRowsAt(idx, j, k)
			for i := range s.Ne[1] {
				if r := at.row(i); r < 0 || r >= d.Ne[1] {
					return &ops.ShapeError{Op: ops.OpSetRows, Msg: fmt.Sprintf("idx[%d, %d, %d] = %d is outside dst rows 0..%d",
						i, j%idx.Ne[1], k%idx.Ne[2], r, d.Ne[1]-1)}
				}
			}
		}
	}
	if !sameStorage(dst, d) {
		copyRaw(dst, d)
	}
	if dst.Type == ops.F16 && cpu.DenseF32Rows(s) && cpu.DenseF16Rows(dst) {
		if s.Ne[2] == 1 && s.Ne[3] == 1 && s.Ne[0] >= 256 && s.Ne[0]*s.Ne[1] >= setRowsSplit && distinctRows(idx, s.Ne[1], d.Ne[1]) {
			n := int(s.Ne[1])
			parallel.For(n, (n+1)/2, func(lo, hi int) {
				ks.setRowsF16(dst, s, idxRowsAt(idx, 0, 0), int64(lo), int64(hi), 0, 0)
			})
			return nil
		}
		for k := range s.Ne[3] {
			for j := range s.Ne[2] {
				ks.setRowsF16(dst, s, idxRowsAt(idx, j, k), 0, s.Ne[1], j, k)
			}
		}
		return nil
	}
	row := make([]float32, s.Ne[0])
	for k := range s.Ne[3] {
		for j := range s.Ne[2] {
			at := idxRowsAt(idx, j, k)
			for i := range s.Ne[1] {
				s.Row(i, j, k, row)
				dst.SetRow(at.row(i), j, k, row)
			}
		}
	}
	return nil
}

// bindSetRows is set_rows' Bind for the KV-cache write of every llama
// token: dense f32 rows into the rows of a dense f16 dst that is the
// first source itself (in place), one (j, k). Its call checks the
// indices, then converts each row with the offsets computed here, on the
// caller's goroutine at every size (refSetRows splits the rows of
// setRowsSplit values and more over two: on the Zen 5 VM the split took
// 2.5 µs a launch at 32 rows of 1024, this loop alone 1.8, ggml 1.5);
// an index outside dst goes to refSetRows for its error (nothing is
// written before the check, as there). Other tensors have no bound form
// (nil).
func (ks *Kernels) bindSetRows(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) func() error {
	d, s, idx := srcs[0], srcs[1], srcs[2]
	if dst.Type != ops.F16 || !sameStorage(dst, d) || !cpu.DenseF32Rows(s) || !cpu.DenseF16Rows(dst) ||
		s.Ne[2] != 1 || s.Ne[3] != 1 {
		return nil
	}
	n, rows, dstRows := int(s.Ne[0]), s.Ne[1], dst.Ne[1]
	src, stride := cpu.F32Rows(s, 0, 0)
	do, nb1 := dst.RowOffset(0, 0, 0), dst.Nb[1]
	at := idxRowsAt(idx, 0, 0)
	return func() error {
		for i := range rows {
			if r := at.row(i); uint64(r) >= uint64(dstRows) {
				return ks.refSetRows(dst, srcs, p)
			}
		}
		for i := range rows {
			off := do + uint64(at.row(i))*nb1
			ks.f32ToF16RowAt(&dst.Buf[off : off+2*uint64(n)][0], &src[i*stride : i*stride+int64(n)][0], n)
		}
		return nil
	}
}

// f32ToF16RowAt is f32ToF16Row on the n > 0 values at src into the
// halves at dst (the bytes of an f16 row); with F16C, a row of a
// multiple of 8 values without NaN is one call of the assembly.
func (ks *Kernels) f32ToF16RowAt(dst *byte, src *float32, n int) {
	h := (*uint16)(unsafe.Pointer(dst))
	if !ks.F32ToF16Whole(h, src, n) {
		ks.F32ToF16Row(unsafe.Slice(h, n), unsafe.Slice(src, n))
	}
}

// idxRows reads the indices of one (j, k) of set_rows' idx (i64 or i32,
// inferSetRows), broadcast over j and k: row(i) is idx[i, j % ne1, k % ne2].
type idxRows struct {
	buf      []byte
	off, nb0 uint64
	i64      bool
}

// idxRowsAt is idx's indices at (j, k).
func idxRowsAt(idx *ops.Tensor, j, k int64) idxRows {
	off := idx.Offs
	if j != 0 { // (no division for the usual j = k = 0)
		off += uint64(j%idx.Ne[1]) * idx.Nb[1]
	}
	if k != 0 {
		off += uint64(k%idx.Ne[2]) * idx.Nb[2]
	}
	return idxRows{buf: idx.Buf, off: off, nb0: idx.Nb[0], i64: idx.Type == ops.I64}
}

func (x idxRows) row(i int64) int64 {
	off := x.off + uint64(i)*x.nb0
	if x.i64 {
		return int64(binary.LittleEndian.Uint64(x.buf[off:]))
	}
	return int64(int32(binary.LittleEndian.Uint32(x.buf[off:])))
}

// setRowsF16 converts rows lo..hi-1 at (j, k) of the dense f32 src s into
// the rows of the dense f16 dst that at names (checked in range).
func (ks *Kernels) setRowsF16(dst, s *ops.Tensor, at idxRows, lo, hi, j, k int64) {
	n := s.Ne[0]
	src, stride := cpu.F32Rows(s, j, k)
	do := dst.RowOffset(0, j, k)
	for i := lo; i < hi; i++ {
		d := do + uint64(at.row(i))*dst.Nb[1]
		ks.F32ToF16Row(unsafe.Slice((*uint16)(unsafe.Pointer(&dst.Buf[d : d+2*uint64(n)][0])), n),
			src[i*stride:i*stride+n])
	}
}

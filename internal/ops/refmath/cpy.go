package refmath

import (
	"fmt"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func (ks *Kernels) refCpy(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	if ops.CpyIntFloat(x.Type, dst.Type) {
		i := int64(0)
		x.ForEach(func(i0, i1, i2, i3 int64) {
			j0, j1, j2, j3 := i%dst.Ne[0], (i/dst.Ne[0])%dst.Ne[1], (i/(dst.Ne[0]*dst.Ne[1]))%dst.Ne[2], i/(dst.Ne[0]*dst.Ne[1]*dst.Ne[2])
			i++
			if dst.Type == ops.I32 {
				dst.SetInt(j0, j1, j2, j3, int64(int32(x.F32(i0, i1, i2, i3))))
			} else {
				dst.SetF32(j0, j1, j2, j3, float32(int32(x.Int(i0, i1, i2, i3))))
			}
		})
		return nil
	}
	if dst.Ne != x.Ne {
		return copyReshaped(dst, x)
	}
	if dst.Type == x.Type {
		copyRaw(dst, x)
		return nil
	}
	if dst.Type == ops.F16 && cpu.DenseF32Rows(x) && cpu.DenseF16Rows(dst) {
		if n, cost := x.NRows(), max(1, x.Ne[0]); cpu.RefInline(n, cost) {
			ks.cpyF16Rows(dst, x, 0, n) // no closure to allocate
		} else {
			cpu.RefSplit(n, cost, func(lo, hi int64) { ks.cpyF16Rows(dst, x, lo, hi) })
		}
		return nil
	}
	normRows(dst, x, func([]float32) {})
	return nil
}

// copyReshaped copies x into dst of another shape with the same element
// count, element i (row-major) to element i, converting through float32
// (or as bytes for integer types). Quantized types have no host math here.
func copyReshaped(dst, x *ops.Tensor) error {
	if x.NElements() == 0 {
		// Nothing to copy; x's rows (ne0 = 0) may still be more
		// than dst has (a zero among its ne1..ne3).
		return nil
	}
	if x.Type.Quantized() || dst.Type.Quantized() {
		if x.Ne[0] == dst.Ne[0] && x.Type == dst.Type {
			// Whole rows: row r of x is row r of dst.
			nb := x.Type.RowSize(x.Ne[0])
			for r := int64(0); r < x.NRows(); r++ {
				i1, i2, i3 := ops.RowIndex(x.Ne, r)
				j1, j2, j3 := ops.RowIndex(dst.Ne, r)
				so, do := x.RowOffset(i1, i2, i3), dst.RowOffset(j1, j2, j3)
				copy(dst.Buf[do:do+nb], x.Buf[so:so+nb])
			}
			return nil
		}
		return &ops.NoHostMathError{What: fmt.Sprintf("cpy %s %s -> %s %s (another shape, quantized)", x.Type, x.ShapeString(), dst.Type, dst.ShapeString())}
	}
	unravel := func(i int64, ne [ops.MaxDims]int64) (a, b, c, d int64) {
		a, i = i%ne[0], i/ne[0]
		b, i = i%ne[1], i/ne[1]
		c, d = i%ne[2], i/ne[2]
		return
	}
	n := x.NElements()
	integer := x.Type == ops.I32 || x.Type == ops.I64
	for i := int64(0); i < n; i++ {
		a0, a1, a2, a3 := unravel(i, x.Ne)
		b0, b1, b2, b3 := unravel(i, dst.Ne)
		if integer {
			dst.SetInt(b0, b1, b2, b3, x.Int(a0, a1, a2, a3))
		} else {
			dst.SetF32(b0, b1, b2, b3, x.F32(a0, a1, a2, a3))
		}
	}
	return nil
}

func refCont(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	copyRaw(dst, srcs[0])
	return nil
}

// copyRaw copies x's elements (blocks) into dst of the same type and
// shape as bytes, whatever the strides of either.
func copyRaw(dst, x *ops.Tensor) {
	// A byte copy costs one unit an element: with the pool's helpers
	// already running (parallel.For), cont n = 32's 512 KB takes 10 µs on
	// two goroutines against 15-20 µs on one.
	if n, cost := x.NRows(), max(1, x.Ne[0]); cpu.RefInline(n, cost) {
		copyRawRows(dst, x, 0, n) // no closure to allocate
	} else {
		cpu.RefSplit(n, cost, func(lo, hi int64) { copyRawRows(dst, x, lo, hi) })
	}
}

// copyRawRows is copyRaw on rows [lo, hi).
func copyRawRows(dst, x *ops.Tensor, lo, hi int64) {
	if lo >= hi {
		return // no rows (an empty x: rowIndex would divide by a zero ne)
	}
	ts := uint64(x.Type.TypeSize())
	nblk := x.Ne[0] / int64(x.Type.BlockSize())
	i1, i2, i3 := ops.RowIndex(x.Ne, lo) // then stepped: no divisions per row
	for r := lo; r < hi; r++ {
		if r > lo {
			if i1++; i1 == x.Ne[1] {
				i1 = 0
				if i2++; i2 == x.Ne[2] {
					i2, i3 = 0, i3+1
				}
			}
		}
		so, do := x.RowOffset(i1, i2, i3), dst.RowOffset(i1, i2, i3)
		if x.Nb[0] == ts && dst.Nb[0] == ts {
			n := uint64(nblk) * ts
			copy(dst.Buf[do:do+n], x.Buf[so:so+n])
			continue
		}
		for b := uint64(0); b < uint64(nblk); b++ {
			copy(dst.Buf[do+b*dst.Nb[0]:do+b*dst.Nb[0]+ts], x.Buf[so+b*x.Nb[0]:so+b*x.Nb[0]+ts])
		}
	}
}

// cpyF16Rows converts rows [lo, hi) of x (f32, dense rows) into dst (f16).
func (ks *Kernels) cpyF16Rows(dst, x *ops.Tensor, lo, hi int64) {
	for r := lo; r < hi; r++ {
		i1, i2, i3 := ops.RowIndex(x.Ne, r)
		ks.F32ToF16Row(cpu.F16RowView(dst, i1, i2, i3), cpu.F32RowView(x, i1, i2, i3))
	}
}

// sameStorage reports whether a and b are the same bytes: same buffer,
// offset, type, shape and strides.
func sameStorage(a, b *ops.Tensor) bool {
	if len(a.Buf) == 0 || len(b.Buf) == 0 {
		return len(a.Buf) == 0 && len(b.Buf) == 0 && a.Ne == b.Ne
	}
	return unsafe.SliceData(a.Buf) == unsafe.SliceData(b.Buf) && a.Offs == b.Offs &&
		a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}

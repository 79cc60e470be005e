package ops

import (
	"fmt"
	"unsafe"
)

// cpy and cont. cpy copies x into a new contiguous tensor of the type
// given by the "type" param: the same type is a bit-exact byte copy
// (quantized blocks included); otherwise rows go through float32 (f16
// rounds to nearest even, quantized types use ggml's reference quantizers,
// whose ne0 must be a multiple of the block size). Integer types copy only
// to themselves, except f32 -> i32 (truncating) and i32 -> f32. cont is
// cpy to x's own type.
//
// With a second source dst (ggml_cpy(x, dst)), the result is written into
// dst's memory with dst's shape and strides (a permuted or viewed dst
// works), its type is dst's (the type param must name it) and x and dst
// need the same element count; elements go in row-major order, so a dst
// of another shape is a reshape, as in ggml. Plain types only when the
// shapes differ.

func inferCpy(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	t := p.Type("type")
	if !p.Has("type") {
		return 0, x.Ne, &ParamError{Op: OpCpy, Param: "type", Msg: "required (destination type, e.g. f16)"}
	}
	if len(srcs) > 1 {
		d := srcs[1]
		if d.Type != t {
			return 0, x.Ne, &ParamError{Op: OpCpy, Param: "type", Msg: fmt.Sprintf("%s, but dst is %s", t, d.Type)}
		}
		if d.NElements() != x.NElements() {
			return 0, x.Ne, shapeErr(OpCpy, "dst %s has %d elements, x %s has %d", d.ShapeString(), d.NElements(), x.ShapeString(), x.NElements())
		}
		if d.Ne != x.Ne && (x.Type.Quantized() || t.Quantized()) && x.Ne[0] != d.Ne[0] {
			return 0, x.Ne, shapeErr(OpCpy, "a quantized cpy to another shape needs the same ne0 (x %s, dst %s)", x.ShapeString(), d.ShapeString())
		}
	}
	if t != x.Type && !cpyIntFloat(x.Type, t) {
		if !isFloatType(x.Type) || !isFloatType(t) {
			return 0, x.Ne, shapeErr(OpCpy, "cannot convert %s to %s (integer types copy only to themselves)", x.Type, t)
		}
		if bs := int64(t.BlockSize()); x.Ne[0]%bs != 0 {
			return 0, x.Ne, shapeErr(OpCpy, "x.ne0 = %d is not a multiple of the %s block size %d", x.Ne[0], t, bs)
		}
	}
	if len(srcs) > 1 {
		return t, srcs[1].Ne, nil
	}
	return t, x.Ne, nil
}

// cpyIntFloat is ggml's f32 -> i32 (truncating, C's conversion) and
// i32 -> f32 copy, the only ones between integer and float types.
func cpyIntFloat(from, to Type) bool {
	return (from == F32 && to == I32) || (from == I32 && to == F32)
}

func refCpy(dst *Tensor, srcs []*Tensor, _ Params) error {
	x := srcs[0]
	if cpyIntFloat(x.Type, dst.Type) {
		i := int64(0)
		x.forEach(func(i0, i1, i2, i3 int64) {
			j0, j1, j2, j3 := i%dst.Ne[0], (i/dst.Ne[0])%dst.Ne[1], (i/(dst.Ne[0]*dst.Ne[1]))%dst.Ne[2], i/(dst.Ne[0]*dst.Ne[1]*dst.Ne[2])
			i++
			if dst.Type == I32 {
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
	if dst.Type == F16 && denseF32Rows(x) && denseF16Rows(dst) {
		if n, cost := x.NRows(), max(1, x.Ne[0]); refInline(n, cost) {
			cpyF16Rows(dst, x, 0, n) // no closure to allocate
		} else {
			refParallel(n, cost, func(lo, hi int64) { cpyF16Rows(dst, x, lo, hi) })
		}
		return nil
	}
	normRows(dst, x, func([]float32) {})
	return nil
}

// copyReshaped copies x into dst of another shape with the same element
// count, element i (row-major) to element i, converting through float32
// (or as bytes for integer types). Quantized types have no host math here.
func copyReshaped(dst, x *Tensor) error {
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
				i1, i2, i3 := rowIndex(x.Ne, r)
				j1, j2, j3 := rowIndex(dst.Ne, r)
				so, do := x.RowOffset(i1, i2, i3), dst.RowOffset(j1, j2, j3)
				copy(dst.Buf[do:do+nb], x.Buf[so:so+nb])
			}
			return nil
		}
		return &NoHostMathError{What: fmt.Sprintf("cpy %s %s -> %s %s (another shape, quantized)", x.Type, x.ShapeString(), dst.Type, dst.ShapeString())}
	}
	unravel := func(i int64, ne [MaxDims]int64) (a, b, c, d int64) {
		a, i = i%ne[0], i/ne[0]
		b, i = i%ne[1], i/ne[1]
		c, d = i%ne[2], i/ne[2]
		return
	}
	n := x.NElements()
	integer := x.Type == I32 || x.Type == I64
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

func inferCont(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	return srcs[0].Type, srcs[0].Ne, nil
}

func refCont(dst *Tensor, srcs []*Tensor, _ Params) error {
	copyRaw(dst, srcs[0])
	return nil
}

// copyRaw copies x's elements (blocks) into dst of the same type and
// shape as bytes, whatever the strides of either.
func copyRaw(dst, x *Tensor) {
	// A byte copy costs one unit an element: with the pool's helpers
	// already running (ParallelFor), cont n = 32's 512 KB takes 10 µs on
	// two goroutines against 15-20 µs on one.
	if n, cost := x.NRows(), max(1, x.Ne[0]); refInline(n, cost) {
		copyRawRows(dst, x, 0, n) // no closure to allocate
	} else {
		refParallel(n, cost, func(lo, hi int64) { copyRawRows(dst, x, lo, hi) })
	}
}

// copyRawRows is copyRaw on rows [lo, hi).
func copyRawRows(dst, x *Tensor, lo, hi int64) {
	if lo >= hi {
		return // no rows (an empty x: rowIndex would divide by a zero ne)
	}
	ts := uint64(x.Type.TypeSize())
	nblk := x.Ne[0] / int64(x.Type.BlockSize())
	i1, i2, i3 := rowIndex(x.Ne, lo) // then stepped: no divisions per row
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
func cpyF16Rows(dst, x *Tensor, lo, hi int64) {
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowIndex(x.Ne, r)
		f32ToF16Row(f16RowView(dst, i1, i2, i3), f32RowView(x, i1, i2, i3))
	}
}

// sameStorage reports whether a and b are the same bytes: same buffer,
// offset, type, shape and strides.
func sameStorage(a, b *Tensor) bool {
	if len(a.Buf) == 0 || len(b.Buf) == 0 {
		return len(a.Buf) == 0 && len(b.Buf) == 0 && a.Ne == b.Ne
	}
	return unsafe.SliceData(a.Buf) == unsafe.SliceData(b.Buf) && a.Offs == b.Offs &&
		a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}

package ops

import "unsafe"

// cpy and cont. cpy copies x into a new contiguous tensor of the type
// given by the "type" param: the same type is a bit-exact byte copy
// (quantized blocks included); otherwise rows go through float32 (f16
// rounds to nearest even, quantized types use ggml's reference quantizers,
// whose ne0 must be a multiple of the block size). Integer types copy only
// to themselves, except f32 ↔ i32 as on ggml's CPU (a C cast: f32 → i32
// truncates toward zero). cont is cpy to x's own type.

func inferCpy(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	t := p.Type("type")
	if !p.Has("type") {
		return 0, x.Ne, &ParamError{Op: OpCpy, Param: "type", Msg: "required (destination type, e.g. f16)"}
	}
	if t != x.Type {
		f32i32 := (x.Type == F32 && t == I32) || (x.Type == I32 && t == F32)
		if (!isFloatType(x.Type) || !isFloatType(t)) && !f32i32 {
			return 0, x.Ne, shapeErr(OpCpy, "cannot convert %s to %s (integer types copy only to themselves, or between f32 and i32)", x.Type, t)
		}
		if bs := int64(t.BlockSize()); x.Ne[0]%bs != 0 {
			return 0, x.Ne, shapeErr(OpCpy, "x.ne0 = %d is not a multiple of the %s block size %d", x.Ne[0], t, bs)
		}
	}
	return t, x.Ne, nil
}

func refCpy(dst *Tensor, srcs []*Tensor, _ Params) error {
	x := srcs[0]
	if dst.Type == x.Type {
		copyRaw(dst, x)
		return nil
	}
	normRows(dst, x, func([]float32) {})
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
	ts := uint64(x.Type.TypeSize())
	nblk := x.Ne[0] / int64(x.Type.BlockSize())
	refParallel(x.NRows(), x.Ne[0], func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
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
	})
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

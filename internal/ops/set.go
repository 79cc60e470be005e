package ops

import "fmt"

// set: ggml_set(a, b, nb1, nb2, nb3, offset): the result is a with b
// written into the view of a that has b's shape, element stride the type
// size, byte strides nb1..nb3 and a byte offset, all in a's contiguous
// layout (ggml requires a contiguous). A stride given as 0 means a's own
// contiguous stride, so {offset: 64} alone places b's rows like a's. With
// inplace the result is a itself (ggml_set_inplace; the only form ggml-et
// runs); the values are the same either way. f32 or i32, b of a's type.
// Each element of b lands at byte L = offset + i0·ts + i1·nb1 + i2·nb2 +
// i3·nb3 of a, which must be element-aligned and inside a.

// setView gives the view's byte strides and offset.
func setView(a *Tensor, p Params) (nb [MaxDims]int64, off int64, err error) {
	ts := int64(a.Type.TypeSize())
	cont := ContiguousStrides(a.Type, a.Ne)
	nb[0] = ts
	for i, name := range []string{"nb1", "nb2", "nb3"} {
		v := p.Int(name)
		if v < 0 || v%ts != 0 {
			return nb, 0, &ParamError{Op: OpSet, Param: name, Msg: fmt.Sprintf("%d is not a non-negative multiple of the element size %d", v, ts)}
		}
		if v == 0 {
			v = int64(cont[i+1])
		}
		nb[i+1] = v
	}
	off = p.Int("offset")
	if off < 0 || off%ts != 0 {
		return nb, 0, &ParamError{Op: OpSet, Param: "offset", Msg: fmt.Sprintf("%d is not a non-negative multiple of the element size %d", off, ts)}
	}
	return nb, off, nil
}

func inferSet(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpSet, "a", a.Type, F32, I32); err != nil {
		return 0, a.Ne, err
	}
	if b.Type != a.Type {
		return 0, a.Ne, shapeErr(OpSet, "b is %s, want a's type %s", b.Type, a.Type)
	}
	nb, off, err := setView(a, p)
	if err != nil {
		return 0, a.Ne, err
	}
	if b.NElements() == 0 {
		return a.Type, a.Ne, nil
	}
	last := off + nb[0]
	for d := 0; d < MaxDims; d++ {
		last += (b.Ne[d] - 1) * nb[d]
	}
	if size := a.NElements() * nb[0]; last > size {
		return 0, a.Ne, shapeErr(OpSet, "b %s at offset %d with strides [%d, %d, %d] reaches byte %d, a %s has %d bytes",
			b.ShapeString(), off, nb[1], nb[2], nb[3], last, a.ShapeString(), size)
	}
	return a.Type, a.Ne, nil
}

func refSet(dst *Tensor, srcs []*Tensor, p Params) error {
	a, b := srcs[0], srcs[1]
	nb, off, err := setView(a, p)
	if err != nil {
		return err
	}
	ts := uint64(nb[0])
	for e := int64(0); e < a.NElements(); e++ {
		i := unflatten(a.Ne, e)
		copyElem(dst, i, a, i, ts)
	}
	for e := int64(0); e < b.NElements(); e++ {
		j := unflatten(b.Ne, e)
		l := off + j[0]*nb[0] + j[1]*nb[1] + j[2]*nb[2] + j[3]*nb[3]
		copyElem(dst, unflatten(a.Ne, l/nb[0]), b, j, ts)
	}
	return nil
}

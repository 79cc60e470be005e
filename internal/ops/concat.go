package ops

import "fmt"

// concat: a and b joined along dimension dim; every other dimension must
// match. Elements are copied as raw bytes (blocks for a quantized type,
// as ggml's CPU does), so any type works. Both sources may be strided
// views.

func inferConcat(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if b.Type != a.Type {
		return 0, a.Ne, shapeErr(OpConcat, "b is %s, want a's type %s", b.Type, a.Type)
	}
	dim := p.Int("dim")
	if dim < 0 || dim >= MaxDims {
		return 0, a.Ne, &ParamError{Op: OpConcat, Param: "dim", Msg: fmt.Sprintf("%d is not a dimension (want 0 to 3)", dim)}
	}
	ne := a.Ne
	for d := 0; d < MaxDims; d++ {
		if int64(d) == dim {
			ne[d] = a.Ne[d] + b.Ne[d]
			continue
		}
		if a.Ne[d] != b.Ne[d] {
			return 0, a.Ne, shapeErr(OpConcat, "a %s and b %s differ in ne%d (only ne%d may differ)", a.ShapeString(), b.ShapeString(), d, dim)
		}
	}
	return a.Type, ne, nil
}

func refConcat(dst *Tensor, srcs []*Tensor, p Params) error {
	a, b := srcs[0], srcs[1]
	dim := int(p.Int("dim"))
	na := a.Ne[dim]
	ts := uint64(a.Type.TypeSize())
	bs := int64(a.Type.BlockSize())
	refParallel(dst.NRows(), dst.Ne[0], func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(dst.Ne, r)
			for i0 := int64(0); i0 < dst.Ne[0]; i0 += bs {
				idx := [MaxDims]int64{i0, i1, i2, i3}
				src := a
				if idx[dim] >= na {
					src = b
					idx[dim] -= na
				}
				copyElem(dst, [MaxDims]int64{i0, i1, i2, i3}, src, idx, ts)
			}
		}
	})
	return nil
}

// --- element helpers shared by the data-movement and recurrent ops ---

// copyElem copies the ts raw bytes of element si of src to element di of
// dst (for a quantized type, of the blocks that hold them).
func copyElem(dst *Tensor, di [MaxDims]int64, src *Tensor, si [MaxDims]int64, ts uint64) {
	d := dst.ElemOffset(di[0], di[1], di[2], di[3])
	s := src.ElemOffset(si[0], si[1], si[2], si[3])
	copy(dst.Buf[d:d+ts], src.Buf[s:s+ts])
}

// unflatten turns a flat element number e (ggml order, ne0 fastest) of a
// tensor of shape ne into its index.
func unflatten(ne [MaxDims]int64, e int64) [MaxDims]int64 {
	var idx [MaxDims]int64
	for d := 0; d < MaxDims-1; d++ {
		idx[d] = e % ne[d]
		e /= ne[d]
	}
	idx[MaxDims-1] = e
	return idx
}

// getFlat reads element e (flat, ggml order) of x as float32.
func getFlat(x *Tensor, e int64) float32 {
	i := unflatten(x.Ne, e)
	return x.F32(i[0], i[1], i[2], i[3])
}

// setFlat writes element e (flat, ggml order) of x.
func setFlat(x *Tensor, e int64, v float32) {
	i := unflatten(x.Ne, e)
	x.SetF32(i[0], i[1], i[2], i[3], v)
}

// readFlat reads n consecutive elements starting at flat element e of x
// into out[:n].
func readFlat(x *Tensor, e int64, out []float32) {
	for k := range out {
		out[k] = getFlat(x, e+int64(k))
	}
}

// writeFlat writes vals to consecutive elements of x starting at flat
// element e.
func writeFlat(x *Tensor, e int64, vals []float32) {
	for k, v := range vals {
		setFlat(x, e+int64(k), v)
	}
}

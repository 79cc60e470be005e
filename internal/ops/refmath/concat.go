package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refConcat(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	a, b := srcs[0], srcs[1]
	dim := int(p.Int("dim"))
	na := a.Ne[dim]
	ts := uint64(a.Type.TypeSize())
	bs := int64(a.Type.BlockSize())
	cpu.RefParallel(dst.NRows(), dst.Ne[0], func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			for i0 := int64(0); i0 < dst.Ne[0]; i0 += bs {
				idx := [ops.MaxDims]int64{i0, i1, i2, i3}
				src := a
				if idx[dim] >= na {
					src = b
					idx[dim] -= na
				}
				copyElem(dst, [ops.MaxDims]int64{i0, i1, i2, i3}, src, idx, ts)
			}
		}
	})
	return nil
}

// --- element helpers shared by the data-movement and recurrent ops ---

// copyElem copies the ts raw bytes of element si of src to element di of
// dst (for a quantized type, of the blocks that hold them).
func copyElem(dst *ops.Tensor, di [ops.MaxDims]int64, src *ops.Tensor, si [ops.MaxDims]int64, ts uint64) {
	d := dst.ElemOffset(di[0], di[1], di[2], di[3])
	s := src.ElemOffset(si[0], si[1], si[2], si[3])
	copy(dst.Buf[d:d+ts], src.Buf[s:s+ts])
}

// unflatten turns a flat element number e (ggml order, ne0 fastest) of a
// tensor of shape ne into its index.
func unflatten(ne [ops.MaxDims]int64, e int64) [ops.MaxDims]int64 {
	var idx [ops.MaxDims]int64
	for d := 0; d < ops.MaxDims-1; d++ {
		idx[d] = e % ne[d]
		e /= ne[d]
	}
	idx[ops.MaxDims-1] = e
	return idx
}

// getFlat reads element e (flat, ggml order) of x as float32.
func getFlat(x *ops.Tensor, e int64) float32 {
	i := unflatten(x.Ne, e)
	return x.F32(i[0], i[1], i[2], i[3])
}

// setFlat writes element e (flat, ggml order) of x.
func setFlat(x *ops.Tensor, e int64, v float32) {
	i := unflatten(x.Ne, e)
	x.SetF32(i[0], i[1], i[2], i[3], v)
}

// readFlat reads n consecutive elements starting at flat element e of x
// into out[:n].
func readFlat(x *ops.Tensor, e int64, out []float32) {
	for k := range out {
		out[k] = getFlat(x, e+int64(k))
	}
}

// writeFlat writes vals to consecutive elements of x starting at flat
// element e.
func writeFlat(x *ops.Tensor, e int64, vals []float32) {
	for k, v := range vals {
		setFlat(x, e+int64(k), v)
	}
}

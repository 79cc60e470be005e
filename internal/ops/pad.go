package ops

import "fmt"

// pad: ggml_pad_ext, x surrounded by lp[i] zeros before and rp[i] zeros
// after, per dimension in ne order; the result is ne + lp + rp. f32 only
// (non-circular padding, the only kind et models); x may be strided.

func padAmounts(p Params) (lp, rp [MaxDims]int64, err error) {
	for _, side := range []struct {
		name string
		out  *[MaxDims]int64
	}{{"lp", &lp}, {"rp", &rp}} {
		list := p.Ints(side.name)
		if len(list) > MaxDims {
			return lp, rp, &ParamError{Op: OpPad, Param: side.name, Msg: fmt.Sprintf("has %d entries, want up to 4", len(list))}
		}
		for d, v := range list {
			if v < 0 {
				return lp, rp, &ParamError{Op: OpPad, Param: side.name, Msg: fmt.Sprintf("negative padding %d in dim %d", v, d)}
			}
			side.out[d] = v
		}
	}
	return lp, rp, nil
}

func inferPad(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpPad, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	lp, rp, err := padAmounts(p)
	if err != nil {
		return 0, x.Ne, err
	}
	var ne [MaxDims]int64
	for d := range ne {
		ne[d] = x.Ne[d] + lp[d] + rp[d]
	}
	// Circular padding wraps around x: an empty x has nothing to wrap
	// into a result that is not empty. (The result is empty when one of
	// its dims is 0; a product of the dims can overflow to 0.)
	if p.Has("circular") && p.Bool("circular") && x.NElements() == 0 && ne[0] != 0 && ne[1] != 0 && ne[2] != 0 && ne[3] != 0 {
		return 0, x.Ne, shapeErr(OpPad, "circular padding of x %s, which has no elements", x.ShapeString())
	}
	return F32, ne, nil
}

func refPad(dst *Tensor, srcs []*Tensor, p Params) error {
	x := srcs[0]
	lp, _, err := padAmounts(p)
	if err != nil {
		return err
	}
	n0 := dst.Ne[0]
	if dst.NElements() == 0 {
		return nil // nothing to write (an empty dst may still have rows of length 0)
	}
	if p.Has("circular") && p.Bool("circular") {
		// ggml_wrap_around: (i - lp + n) % n per dim.
		wrap := func(c, n int64) int64 { return ((c % n) + n) % n }
		refParallel(dst.NRows(), n0, func(lo, hi int64) {
			row := make([]float32, n0)
			for r := lo; r < hi; r++ {
				i1, i2, i3 := rowIndex(dst.Ne, r)
				j1, j2, j3 := wrap(i1-lp[1], x.Ne[1]), wrap(i2-lp[2], x.Ne[2]), wrap(i3-lp[3], x.Ne[3])
				for i0 := range row {
					row[i0] = x.F32(wrap(int64(i0)-lp[0], x.Ne[0]), j1, j2, j3)
				}
				dst.SetRow(i1, i2, i3, row)
			}
		})
		return nil
	}
	refParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(dst.Ne, r)
			j1, j2, j3 := i1-lp[1], i2-lp[2], i3-lp[3]
			inside := j1 >= 0 && j1 < x.Ne[1] && j2 >= 0 && j2 < x.Ne[2] && j3 >= 0 && j3 < x.Ne[3]
			for i0 := range row {
				row[i0] = 0
				if j0 := int64(i0) - lp[0]; inside && j0 >= 0 && j0 < x.Ne[0] {
					row[i0] = x.F32(j0, j1, j2, j3)
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

package ops

// diag: a vector per (i2, i3) becomes a diagonal matrix: x [N, 1, ne2,
// ne3] gives [N, N, ne2, ne3] with result[i0, i1] = x[i1] when i0 == i1
// and 0 elsewhere. f32 only.

func inferDiag(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpDiag, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[1] != 1 {
		return 0, x.Ne, shapeErr(OpDiag, "x %s has ne1 = %d, want 1 (one vector per matrix)", x.ShapeString(), x.Ne[1])
	}
	return F32, [MaxDims]int64{x.Ne[0], x.Ne[0], x.Ne[2], x.Ne[3]}, nil
}

func refDiag(dst *Tensor, srcs []*Tensor, _ Params) error {
	x := srcs[0]
	n0 := dst.Ne[0]
	refParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(dst.Ne, r)
			clear(row)
			row[i1] = x.F32(i1, 0, i2, i3)
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

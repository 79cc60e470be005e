package ops

// fill: every element of the result is c (rounded to f16 for an f16
// tensor); x only supplies the type and shape. f32 or f16.

func inferFill(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpFill, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

func refFill(dst *Tensor, _ []*Tensor, p Params) error {
	c := p.F32("c")
	row := make([]float32, dst.Ne[0])
	for i := range row {
		row[i] = c
	}
	for r := int64(0); r < dst.NRows(); r++ {
		i1, i2, i3 := rowIndex(dst.Ne, r)
		dst.SetRow(i1, i2, i3, row)
	}
	return nil
}

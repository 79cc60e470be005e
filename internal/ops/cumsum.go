package ops

// cumsum: the running sum along ne0, y[i] = y[i-1] + x[i], accumulated in
// float32 as ggml_vec_cumsum_f32 does. f32 only; same shape.

func inferCumsum(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpCumsum, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return F32, x.Ne, nil
}

func refCumsum(dst *Tensor, srcs []*Tensor, _ Params) error {
	normRows(dst, srcs[0], func(y []float32) {
		for i := 1; i < len(y); i++ {
			y[i] += y[i-1]
		}
	})
	return nil
}

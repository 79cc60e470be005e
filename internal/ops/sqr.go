package ops

// sqr: y = x·x elementwise, in float32 as ggml's CPU computes it. x may be
// f32 or f16 (f16 widens, squares in float32 and rounds the result back to
// f16) and may be a strided view; the result has x's type and shape.

func inferSqr(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpSqr, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

func refSqr(dst *Tensor, srcs []*Tensor, _ Params) error {
	normRows(dst, srcs[0], func(y []float32) {
		for i, v := range y {
			y[i] = v * v
		}
	})
	return nil
}

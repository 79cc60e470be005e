package ops

// scale: y = x*scale + bias (bias 0 for plain ggml_scale, where the CPU
// only multiplies). f32 only, as on the CPU; x may be a strided view.

func inferScale(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpScale, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return F32, x.Ne, nil
}

func refScale(dst *Tensor, srcs []*Tensor, p Params) error {
	s, b := p.F32("scale"), p.F32("bias")
	normRows(dst, srcs[0], func(y []float32) {
		if b == 0 {
			scaleRow(y, s)
			return
		}
		for i, v := range y {
			y[i] = float32(v*s) + b
		}
	})
	return nil
}

package ops

// clamp: y = MAX(MIN(x, max), min) elementwise with C's macro semantics
// (so a NaN input gives max, as on the CPU). f32 or f16 (f16 widens,
// clamps in float32, rounds back); the result has x's type and shape.

func inferClamp(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpClamp, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	return x.Type, x.Ne, nil
}

func refClamp(dst *Tensor, srcs []*Tensor, p Params) error {
	lo, hi := p.F32("min"), p.F32("max")
	normRows(dst, srcs[0], func(y []float32) {
		for i, v := range y {
			y[i] = clampF32(v, lo, hi)
		}
	})
	return nil
}

// clampF32 is MAX(MIN(v, hi), lo) with MIN(a, b) = a < b ? a : b and
// MAX(a, b) = a > b ? a : b.
func clampF32(v, lo, hi float32) float32 {
	m := hi
	if v < hi {
		m = v
	}
	if m > lo {
		return m
	}
	return lo
}

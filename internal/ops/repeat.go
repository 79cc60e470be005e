package ops

import "fmt"

// repeat: ggml_repeat_4d, x tiled to shape ne; every ne[i] must be a
// multiple of x.ne[i]. Element (i0..i3) of the result is x[i0 % x.ne0,
// i1 % x.ne1, ...], copied as raw bytes: any plain type (the CPU has f32,
// f16, bf16, i16 and i32); a quantized x has no host math. x may be a
// strided view.

func inferRepeat(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]

	ne := [MaxDims]int64{1, 1, 1, 1}
	list := p.Ints("ne")
	if len(list) < 1 || len(list) > MaxDims {
		return 0, x.Ne, &ParamError{Op: OpRepeat, Param: "ne", Msg: fmt.Sprintf("has %d entries, want 1 to 4", len(list))}
	}
	copy(ne[:], list)
	for d := 0; d < MaxDims; d++ {
		if ne[d] < 0 {
			return 0, x.Ne, &ParamError{Op: OpRepeat, Param: "ne", Msg: fmt.Sprintf("negative ne%d = %d", d, ne[d])}
		}
		if x.Ne[d] == 0 || ne[d]%x.Ne[d] != 0 {
			return 0, x.Ne, shapeErr(OpRepeat, "x %s cannot be repeated to %s: ne%d = %d is not a multiple of x.ne%d = %d",
				x.ShapeString(), shapeString(ne), d, ne[d], d, x.Ne[d])
		}
	}
	return x.Type, ne, nil
}

func refRepeat(dst *Tensor, srcs []*Tensor, _ Params) error {
	x := srcs[0]
	if x.Type.Quantized() {
		return &NoHostMathError{What: "repeat of " + x.Type.String() + " (quantized)"}
	}
	ts := uint64(x.Type.TypeSize())
	refParallel(dst.NRows(), dst.Ne[0], func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(dst.Ne, r)
			for i0 := int64(0); i0 < dst.Ne[0]; i0++ {
				copyElem(dst, [MaxDims]int64{i0, i1, i2, i3}, x,
					[MaxDims]int64{i0 % x.Ne[0], i1 % x.Ne[1], i2 % x.Ne[2], i3 % x.Ne[3]}, ts)
			}
		}
	})
	return nil
}

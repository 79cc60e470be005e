package ops

// sum_rows and mean reduce every row of ne0 f32 values to one value: the
// result is [1, ne1, ne2, ne3]. As on the CPU (ggml_vec_sum_f32), the sum
// is accumulated in float64 (ggml_float) and rounded to float32; mean then
// divides that float32 sum by (float) ne0.

func inferSumRows(op Op) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
		x := srcs[0]
		if err := wantTypes(op, "x", x.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		return F32, [MaxDims]int64{1, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
	}
}

func refSumRows(dst *Tensor, srcs []*Tensor, _ Params) error {
	reduceRows(dst, srcs[0], func(sum float32, _ int64) float32 { return sum })
	return nil
}

func refMean(dst *Tensor, srcs []*Tensor, _ Params) error {
	reduceRows(dst, srcs[0], func(sum float32, n int64) float32 { return sum / float32(n) })
	return nil
}

// reduceRows writes f(float32(Σ row), ne0) for every row of x into element
// (0, i1, i2, i3) of dst.
func reduceRows(dst, x *Tensor, f func(sum float32, n int64) float32) {
	n0 := x.Ne[0]
	refParallel(x.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			var sum float64
			for _, v := range row {
				sum += float64(v)
			}
			dst.SetF32(0, i1, i2, i3, f(float32(sum), n0))
		}
	})
}

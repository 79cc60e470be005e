package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refSumRows(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	reduceRows(dst, srcs[0], func(sum float32, _ int64) float32 { return sum })
	return nil
}

func refMean(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	reduceRows(dst, srcs[0], func(sum float32, n int64) float32 { return sum / float32(n) })
	return nil
}

// reduceRows writes f(float32(Σ row), ne0) for every row of x into element
// (0, i1, i2, i3) of dst.
func reduceRows(dst, x *ops.Tensor, f func(sum float32, n int64) float32) {
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			var sum float64
			for _, v := range row {
				sum += float64(v)
			}
			dst.SetF32(0, i1, i2, i3, f(float32(sum), n0))
		}
	})
}

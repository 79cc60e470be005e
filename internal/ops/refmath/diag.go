package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refDiag(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	n0 := dst.Ne[0]
	cpu.RefParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			clear(row)
			row[i1] = x.F32(i1, 0, i2, i3)
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

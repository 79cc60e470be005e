package refmath

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refTri(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	keep := ops.TriKeep(p.Str("type"))
	if keep == nil {
		return &ops.ParamError{Op: ops.OpTri, Param: "type", Msg: fmt.Sprintf("unknown tri type %q", p.Str("type"))}
	}
	x := srcs[0]
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, row)
			for i0 := range row {
				if !keep(int64(i0), i1) {
					row[i0] = 0
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

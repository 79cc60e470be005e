package refmath

import (
	"github.com/ainekko/et/internal/ops"
)

func refFill(dst *ops.Tensor, _ []*ops.Tensor, p ops.Params) error {
	c := p.F32("c")
	row := make([]float32, dst.Ne[0])
	for i := range row {
		row[i] = c
	}
	for r := int64(0); r < dst.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(dst.Ne, r)
		dst.SetRow(i1, i2, i3, row)
	}
	return nil
}

package refmath

import (
	"github.com/ainekko/et/internal/ops"
)

func refSqr(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	normRows(dst, srcs[0], func(y []float32) {
		for i, v := range y {
			y[i] = v * v
		}
	})
	return nil
}

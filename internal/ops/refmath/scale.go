package refmath

import (
	"github.com/ainekko/et/internal/ops"
)

func refScale(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
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

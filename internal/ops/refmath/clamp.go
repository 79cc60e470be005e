package refmath

import (
	"github.com/ainekko/et/internal/ops"
)

func refClamp(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
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

package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refRepeat(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	if x.Type.Quantized() {
		return &ops.NoHostMathError{What: "repeat of " + x.Type.String() + " (quantized)"}
	}
	ts := uint64(x.Type.TypeSize())
	cpu.RefParallel(dst.NRows(), dst.Ne[0], func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			for i0 := int64(0); i0 < dst.Ne[0]; i0++ {
				copyElem(dst, [ops.MaxDims]int64{i0, i1, i2, i3}, x,
					[ops.MaxDims]int64{i0 % x.Ne[0], i1 % x.Ne[1], i2 % x.Ne[2], i3 % x.Ne[3]}, ts)
			}
		}
	})
	return nil
}

package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refPad(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	lp, _, err := ops.PadAmounts(p)
	if err != nil {
		return err
	}
	n0 := dst.Ne[0]
	if dst.NElements() == 0 {
		return nil // nothing to write (an empty dst may still have rows of length 0)
	}
	if p.Has("circular") && p.Bool("circular") {
		// ggml_wrap_around: (i - lp + n) % n per dim.
		wrap := func(c, n int64) int64 { return ((c % n) + n) % n }
		cpu.RefParallel(dst.NRows(), n0, func(lo, hi int64) {
			row := make([]float32, n0)
			for r := lo; r < hi; r++ {
				i1, i2, i3 := ops.RowIndex(dst.Ne, r)
				j1, j2, j3 := wrap(i1-lp[1], x.Ne[1]), wrap(i2-lp[2], x.Ne[2]), wrap(i3-lp[3], x.Ne[3])
				for i0 := range row {
					row[i0] = x.F32(wrap(int64(i0)-lp[0], x.Ne[0]), j1, j2, j3)
				}
				dst.SetRow(i1, i2, i3, row)
			}
		})
		return nil
	}
	cpu.RefParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			j1, j2, j3 := i1-lp[1], i2-lp[2], i3-lp[3]
			inside := j1 >= 0 && j1 < x.Ne[1] && j2 >= 0 && j2 < x.Ne[2] && j3 >= 0 && j3 < x.Ne[3]
			for i0 := range row {
				row[i0] = 0
				if j0 := int64(i0) - lp[0]; inside && j0 >= 0 && j0 < x.Ne[0] {
					row[i0] = x.F32(j0, j1, j2, j3)
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

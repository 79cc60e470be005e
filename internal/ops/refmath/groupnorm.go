package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refGroupNorm(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	eps := p.F32("eps")
	groups := p.Int("n_groups")
	ch := x.Ne[2]
	per := (ch + groups - 1) / groups
	n0, n1 := x.Ne[0], x.Ne[1]
	cpu.RefParallel(groups*x.Ne[3], per*n0*n1, func(lo, hi int64) {
		for w := lo; w < hi; w++ {
			g, i3 := w%groups, w/groups
			start := g * per
			end := min(start+per, ch)
			if start >= end {
				continue
			}
			n := (end - start) * n1
			buf := make([]float32, n*n0)
			var sum float64
			k := int64(0)
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < n1; i1++ {
					row := buf[k*n0 : (k+1)*n0]
					x.Row(i1, i2, i3, row)
					var sr float64
					for _, v := range row {
						sr += float64(v)
					}
					sum += sr
					k++
				}
			}
			mean := float32(sum / float64(n*n0))
			var sum2 float64
			for i, v := range buf {
				d := v - mean
				buf[i] = d
				sum2 += float64(d * d)
			}
			variance := float32(sum2 / float64(n*n0))
			scale := float32(1) / float32(math.Sqrt(float64(variance+eps)))
			k = 0
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < n1; i1++ {
					row := buf[k*n0 : (k+1)*n0]
					scaleRow(row, scale)
					dst.SetRow(i1, i2, i3, row)
					k++
				}
			}
		}
	})
	return nil
}

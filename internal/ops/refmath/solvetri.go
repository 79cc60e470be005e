package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refSolveTri(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	a, b := srcs[0], srcs[1]
	n, k := a.Ne[0], b.Ne[0]
	nb := b.Ne[2] * b.Ne[3]
	cpu.RefParallel(nb, n*n, func(lo, hi int64) {
		am := make([]float32, n*n)
		bm := make([]float32, k*n)
		x := make([]float32, k*n)
		for w := lo; w < hi; w++ {
			i2, i3 := w%b.Ne[2], w/b.Ne[2]
			for i := int64(0); i < n; i++ {
				a.Row(i, i2, i3, am[i*n:(i+1)*n])
				b.Row(i, i2, i3, bm[i*k:(i+1)*k])
			}
			for c := int64(0); c < k; c++ {
				for i := int64(0); i < n; i++ {
					var sum float32
					for t := int64(0); t < i; t++ {
						sum += am[i*n+t] * x[t*k+c]
					}
					x[i*k+c] = (bm[i*k+c] - sum) / am[i*n+i]
				}
			}
			for i := int64(0); i < n; i++ {
				dst.SetRow(i, i2, i3, x[i*k:(i+1)*k])
			}
		}
	})
	return nil
}

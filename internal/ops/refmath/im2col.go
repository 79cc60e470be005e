package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refIm2col(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	kernel, data := srcs[0], srcs[1]
	g, err := ops.ConvParams(ops.OpIm2col, p)
	if err != nil {
		return err
	}
	is2d := p.Bool("is_2d")
	kw := kernel.Ne[0]
	kh, ic := int64(1), kernel.Ne[1]
	iw, ih := data.Ne[0], int64(1)
	if is2d {
		kh, ic = kernel.Ne[1], kernel.Ne[2]
		ih = data.Ne[1]
	}
	n0 := dst.Ne[0]
	cpu.RefParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(dst.Ne, r)
			ow, oh, n := i1, i2, i3
			if !is2d {
				oh, n = 0, i2
			}
			for c := int64(0); c < ic; c++ {
				for ky := int64(0); ky < kh; ky++ {
					y := oh*g.S1 + ky*g.D1 - g.P1
					for kx := int64(0); kx < kw; kx++ {
						x := ow*g.S0 + kx*g.D0 - g.P0
						v := float32(0)
						if x >= 0 && x < iw && y >= 0 && y < ih {
							if is2d {
								v = data.F32(x, y, c, n)
							} else {
								v = data.F32(x, c, n, 0)
							}
						}
						row[c*kh*kw+ky*kw+kx] = v
					}
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

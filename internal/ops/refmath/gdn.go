package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/mulmat"
)

func refGatedDeltaNet(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	d, err := ops.GDNShape(srcs)
	if err != nil {
		return err
	}
	q, k, v, g, beta, state := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	slots := p.Int("K")
	sv := d.SV
	scale := 1 / float32(math.Sqrt(float64(float32(sv))))
	attnElems := sv * d.H * d.T * d.N
	slotSize := sv * sv * d.H * d.N
	cpu.RefParallel(d.H*d.N, sv*sv*d.T, func(lo, hi int64) {
		m := make([]float32, sv*sv)
		qr := make([]float32, sv)
		kr := make([]float32, sv)
		vr := make([]float32, sv)
		gr := make([]float32, g.Ne[0])
		delta := make([]float32, sv)
		out := make([]float32, sv)
		for w := lo; w < hi; w++ {
			h, n := w%d.H, w/d.H
			iq, ik := h%d.HQ, h%d.HK
			nq, nk := n/(d.N/d.NQ), n/(d.N/d.NK)
			for j := int64(0); j < sv; j++ {
				state.Row(j, h, n, m[j*sv:(j+1)*sv])
			}
			for t := int64(0); t < d.T; t++ {
				q.Row(iq, t, nq, qr)
				k.Row(ik, t, nk, kr)
				v.Row(h, t, n, vr)
				g.Row(h, t, n, gr)
				b := beta.F32(0, h, t, n)
				if d.KDA {
					for i, gv := range gr {
						delta[i] = cpu.Expf32(gv)
					}
					for j := int64(0); j < sv; j++ {
						row := m[j*sv : (j+1)*sv]
						for i := range row {
							row[i] *= delta[i]
						}
					}
				} else {
					scaleRow(m, cpu.Expf32(gr[0]))
				}
				for j := int64(0); j < sv; j++ {
					delta[j] = (vr[j] - mulmat.DotF32(m[j*sv:(j+1)*sv], kr)) * b
				}
				for j := int64(0); j < sv; j++ {
					row := m[j*sv : (j+1)*sv]
					for i := range row {
						row[i] += kr[i] * delta[j]
					}
				}
				for j := int64(0); j < sv; j++ {
					out[j] = mulmat.DotF32(m[j*sv:(j+1)*sv], qr) * scale
				}
				writeFlat(dst, ((n*d.T+t)*d.H+h)*sv, out)
				if slot := d.T - 1 - t; slot < slots {
					writeFlat(dst, attnElems+slot*slotSize+(n*d.H+h)*sv*sv, m)
				}
			}
		}
	})
	return nil
}

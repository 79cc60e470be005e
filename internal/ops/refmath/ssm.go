package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func refSSMConv(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	sx, c := srcs[0], srcs[1]
	dconv, dinner := c.Ne[0], c.Ne[1]
	nt, ns := dst.Ne[1], dst.Ne[2]
	cpu.RefParallel(dinner*ns, sx.Ne[0], func(lo, hi int64) {
		win := make([]float32, sx.Ne[0])
		w := make([]float32, dconv)
		for r := lo; r < hi; r++ {
			i, s := r%dinner, r/dinner
			sx.Row(i, s, 0, win)
			c.Row(i, 0, 0, w)
			for t := int64(0); t < nt; t++ {
				var sum float32
				for j, cj := range w {
					sum += win[t+int64(j)] * cj
				}
				dst.SetF32(i, t, s, 0, sum)
			}
		}
	})
	return nil
}

// softplusSSM is ggml_compute_softplus_f32: x for x > 20, else log1p(exp(x)).
func softplusSSM(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(float64(cpu.Expf32(x))))
}

func refSSMScan(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	d, err := ops.SSMScanShape(srcs)
	if err != nil {
		return err
	}
	s, x, dt, a, b, c, ids := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]
	k := p.Int("K")
	seqStart := make([]int64, d.NSeqs)
	for q := range seqStart {
		id := ids.Int(int64(q), 0, 0, 0)
		if id < 0 || id >= s.Ne[3] {
			return ops.ShapeErr(ops.OpSSMScan, "ids[%d] = %d is not a state (want 0 to %d)", q, id, s.Ne[3]-1)
		}
		seqStart[q] = id
	}
	yElems := x.NElements()
	headState := d.DState * d.HeadDim
	slotSize := headState * d.NHead * d.NSeqs
	mamba1 := a.Ne[0] != 1
	perGroup := d.NHead / d.NGroup
	cpu.RefParallel(d.NHead*d.NSeqs, headState*d.NTok, func(lo, hi int64) {
		state := make([]float32, headState)
		xr := make([]float32, d.HeadDim)
		br := make([]float32, d.DState)
		cr := make([]float32, d.DState)
		ar := make([]float32, a.Ne[0])
		y := make([]float32, d.HeadDim)
		for w := lo; w < hi; w++ {
			h, q := w%d.NHead, w/d.NHead
			g := h / perGroup
			for i1 := int64(0); i1 < d.HeadDim; i1++ {
				s.Row(i1, h, seqStart[q], state[i1*d.DState:(i1+1)*d.DState])
			}
			a.Row(h, 0, 0, ar)
			for t := int64(0); t < d.NTok; t++ {
				x.Row(h, t, q, xr)
				b.Row(g, t, q, br)
				c.Row(g, t, q, cr)
				dtsp := softplusSSM(dt.F32(h, t, q, 0))
				dA := float32(0)
				if !mamba1 {
					dA = cpu.Expf32(dtsp * ar[0])
				}
				for i1 := int64(0); i1 < d.HeadDim; i1++ {
					xdt := xr[i1] * dtsp
					st := state[i1*d.DState : (i1+1)*d.DState]
					var sum float32
					for i0 := range st {
						decay := dA
						if mamba1 {
							decay = cpu.Expf32(dtsp * ar[i0])
						}
						v := st[i0]*decay + br[i0]*xdt
						sum += v * cr[i0]
						st[i0] = v
					}
					y[i1] = sum
				}
				writeFlat(dst, ((q*d.NTok+t)*d.NHead+h)*d.HeadDim, y)
				if slot := d.NTok - 1 - t; slot < k {
					writeFlat(dst, yElems+slot*slotSize+(q*d.NHead+h)*headState, state)
				}
			}
		}
	})
	return nil
}

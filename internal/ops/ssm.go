package ops

import (
	"fmt"
	"math"
)

// ssm_conv and ssm_scan: the Mamba (1 and 2) recurrent blocks, with the
// CPU's float32 arithmetic.
//
// ssm_conv(sx, c): a depthwise causal 1-D convolution over a sliding
// window. sx [d_conv-1+n_t, d_inner, n_s], c [d_conv, d_inner] ->
// dst [d_inner, n_t, n_s], dst[i, t, s] = Σ_{j<d_conv} sx[t+j, i, s]·c[j, i]
// (float32 sum in order j = 0, 1, ...).
//
// ssm_scan(s, x, dt, A, B, C, ids) with K snapshot slots:
//
//	s   [d_state, head_dim, n_head, >= n_seqs]  input states; sequence q starts from s[..., ids[q]]
//	x   [head_dim, n_head, n_t, n_seqs]
//	dt  [n_head, n_t, n_seqs]
//	A   [d_state, n_head] (Mamba-1) or [1, n_head] (Mamba-2)
//	B,C [d_state, n_group, n_t, n_seqs]          head h uses group h / (n_head/n_group)
//	ids [n_seqs] i32
//
// Per token: dt' = softplus(dt) (x for x > 20, else log1p(exp(x))),
// state = state·exp(dt'·A) + B·x·dt', y = Σ_state state·C. The result is
// 1-D: y in x's layout (nelements(x) values), then K state blocks of
// d_state·head_dim·n_head·n_seqs values; slot k holds the state after
// token n_t-1-k (slot 0 = the final state). Slots k >= n_t are not
// written (ggml leaves them to the caller; Compute's fresh result has
// zeros there). K = 1 is plain ggml_ssm_scan. The K slots follow ggml's
// rollback change (66d09fae), by analogy with gated_delta_net: confirm
// against a CPU run before relying on K > 1.

func inferSSMConv(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	sx, c := srcs[0], srcs[1]
	var zero [MaxDims]int64
	if err := wantTypes(OpSSMConv, "sx", sx.Type, F32); err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpSSMConv, "c", c.Type, F32); err != nil {
		return 0, zero, err
	}
	switch {
	case sx.Ne[3] != 1:
		return 0, zero, shapeErr(OpSSMConv, "sx %s is not 3-D", sx.ShapeString())
	case c.Ne[2] != 1 || c.Ne[3] != 1:
		return 0, zero, shapeErr(OpSSMConv, "c %s is not a matrix", c.ShapeString())
	case sx.Ne[1] != c.Ne[1]:
		return 0, zero, shapeErr(OpSSMConv, "sx.ne1 = %d != c.ne1 = %d (d_inner)", sx.Ne[1], c.Ne[1])
	case sx.Ne[0]-c.Ne[0]+1 < 0:
		return 0, zero, shapeErr(OpSSMConv, "sx.ne0 = %d is shorter than the kernel d_conv - 1 = %d", sx.Ne[0], c.Ne[0]-1)
	}
	return F32, [MaxDims]int64{c.Ne[1], sx.Ne[0] - c.Ne[0] + 1, sx.Ne[2], 1}, nil
}

func refSSMConv(dst *Tensor, srcs []*Tensor, _ Params) error {
	sx, c := srcs[0], srcs[1]
	dconv, dinner := c.Ne[0], c.Ne[1]
	nt, ns := dst.Ne[1], dst.Ne[2]
	refParallel(dinner*ns, sx.Ne[0], func(lo, hi int64) {
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

// ssmScanDims are the sizes of an ssm_scan.
type ssmScanDims struct {
	dState, headDim, nHead, nGroup, nTok, nSeqs int64
}

func ssmScanShape(srcs []*Tensor) (ssmScanDims, error) {
	s, x, dt, a, b, c, ids := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]
	var d ssmScanDims
	for i, t := range srcs[:6] {
		if err := wantTypes(OpSSMScan, []string{"s", "x", "dt", "A", "B", "C"}[i], t.Type, F32); err != nil {
			return d, err
		}
	}
	if err := wantTypes(OpSSMScan, "ids", ids.Type, I32); err != nil {
		return d, err
	}
	d = ssmScanDims{dState: s.Ne[0], headDim: x.Ne[0], nHead: x.Ne[1], nGroup: b.Ne[1], nTok: x.Ne[2], nSeqs: x.Ne[3]}
	switch {
	case dt.Ne != [MaxDims]int64{d.nHead, d.nTok, d.nSeqs, 1}:
		return d, shapeErr(OpSSMScan, "dt %s, want [n_head, n_t, n_seqs] = [%d, %d, %d, 1]", dt.ShapeString(), d.nHead, d.nTok, d.nSeqs)
	case s.Ne[1] != d.headDim || s.Ne[2] != d.nHead:
		return d, shapeErr(OpSSMScan, "s %s, want [d_state, head_dim = %d, n_head = %d, >= n_seqs]", s.ShapeString(), d.headDim, d.nHead)
	case b.Ne != c.Ne:
		return d, shapeErr(OpSSMScan, "B %s and C %s differ", b.ShapeString(), c.ShapeString())
	case b.Ne[0] != d.dState || b.Ne[2] != d.nTok || b.Ne[3] != d.nSeqs:
		return d, shapeErr(OpSSMScan, "B %s, want [d_state = %d, n_group, n_t = %d, n_seqs = %d]", b.ShapeString(), d.dState, d.nTok, d.nSeqs)
	case d.nGroup == 0 || d.nHead%d.nGroup != 0:
		return d, shapeErr(OpSSMScan, "n_head = %d is not a multiple of n_group = %d", d.nHead, d.nGroup)
	case a.Ne[1] != d.nHead || a.Ne[2] != 1 || a.Ne[3] != 1 || (a.Ne[0] != 1 && a.Ne[0] != d.dState):
		return d, shapeErr(OpSSMScan, "A %s, want [d_state = %d or 1, n_head = %d]", a.ShapeString(), d.dState, d.nHead)
	case ids.Ne != [MaxDims]int64{d.nSeqs, 1, 1, 1}:
		return d, shapeErr(OpSSMScan, "ids %s, want [n_seqs = %d]", ids.ShapeString(), d.nSeqs)
	}
	return d, nil
}

func inferSSMScan(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	var zero [MaxDims]int64
	d, err := ssmScanShape(srcs)
	if err != nil {
		return 0, zero, err
	}
	k := p.Int("K")
	if k < 1 {
		return 0, zero, &ParamError{Op: OpSSMScan, Param: "K", Msg: fmt.Sprintf("%d, want >= 1 snapshot slot", k)}
	}
	n := srcs[1].NElements() + d.dState*d.headDim*d.nHead*d.nSeqs*k
	return F32, [MaxDims]int64{n, 1, 1, 1}, nil
}

// softplusSSM is ggml_compute_softplus_f32: x for x > 20, else log1p(exp(x)).
func softplusSSM(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(float64(expf32(x))))
}

func refSSMScan(dst *Tensor, srcs []*Tensor, p Params) error {
	d, err := ssmScanShape(srcs)
	if err != nil {
		return err
	}
	s, x, dt, a, b, c, ids := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]
	k := p.Int("K")
	seqStart := make([]int64, d.nSeqs)
	for q := range seqStart {
		id := ids.Int(int64(q), 0, 0, 0)
		if id < 0 || id >= s.Ne[3] {
			return shapeErr(OpSSMScan, "ids[%d] = %d is not a state (want 0 to %d)", q, id, s.Ne[3]-1)
		}
		seqStart[q] = id
	}
	yElems := x.NElements()
	headState := d.dState * d.headDim
	slotSize := headState * d.nHead * d.nSeqs
	mamba1 := a.Ne[0] != 1
	perGroup := d.nHead / d.nGroup
	refParallel(d.nHead*d.nSeqs, headState*d.nTok, func(lo, hi int64) {
		state := make([]float32, headState)
		xr := make([]float32, d.headDim)
		br := make([]float32, d.dState)
		cr := make([]float32, d.dState)
		ar := make([]float32, a.Ne[0])
		y := make([]float32, d.headDim)
		for w := lo; w < hi; w++ {
			h, q := w%d.nHead, w/d.nHead
			g := h / perGroup
			for i1 := int64(0); i1 < d.headDim; i1++ {
				s.Row(i1, h, seqStart[q], state[i1*d.dState:(i1+1)*d.dState])
			}
			a.Row(h, 0, 0, ar)
			for t := int64(0); t < d.nTok; t++ {
				x.Row(h, t, q, xr)
				b.Row(g, t, q, br)
				c.Row(g, t, q, cr)
				dtsp := softplusSSM(dt.F32(h, t, q, 0))
				dA := float32(0)
				if !mamba1 {
					dA = expf32(dtsp * ar[0])
				}
				for i1 := int64(0); i1 < d.headDim; i1++ {
					xdt := xr[i1] * dtsp
					st := state[i1*d.dState : (i1+1)*d.dState]
					var sum float32
					for i0 := range st {
						decay := dA
						if mamba1 {
							decay = expf32(dtsp * ar[i0])
						}
						v := st[i0]*decay + br[i0]*xdt
						sum += v * cr[i0]
						st[i0] = v
					}
					y[i1] = sum
				}
				writeFlat(dst, ((q*d.nTok+t)*d.nHead+h)*d.headDim, y)
				if slot := d.nTok - 1 - t; slot < k {
					writeFlat(dst, yElems+slot*slotSize+(q*d.nHead+h)*headState, state)
				}
			}
		}
	})
	return nil
}

package refmath

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// refRepeatBack sums, for every element of dst, the x elements it was
// repeated to, in the CPU's order (repeats of dim 3 outermost, of dim 0
// innermost) in float32.
func refRepeatBack(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	x := srcs[0]
	ne := dst.Ne
	var nr [ops.MaxDims]int64
	for d := range nr {
		nr[d] = x.Ne[d] / ne[d]
	}
	dst.ForEach(func(k0, k1, k2, k3 int64) {
		var acc float32
		for i3 := int64(0); i3 < nr[3]; i3++ {
			for i2 := int64(0); i2 < nr[2]; i2++ {
				for i1 := int64(0); i1 < nr[1]; i1++ {
					for i0 := int64(0); i0 < nr[0]; i0++ {
						acc += x.F32(i0*ne[0]+k0, i1*ne[1]+k1, i2*ne[2]+k2, i3*ne[3]+k3)
					}
				}
			}
		}
		dst.SetF32(k0, k1, k2, k3, acc)
	})
	return nil
}

// refGetRowsBack adds grad row i into dst row rows[i], for each index in
// order, into zeros.
func refGetRowsBack(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	g, rows := srcs[0], srcs[1]
	n0 := g.Ne[0]
	acc := make([][]float32, dst.Ne[1])
	for i := range acc {
		acc[i] = make([]float32, n0)
	}
	row := make([]float32, n0)
	for i := int64(0); i < rows.Ne[0]; i++ {
		r := rows.Int(i, 0, 0, 0)
		if r < 0 || r >= dst.Ne[1] {
			return ops.ShapeErr(ops.OpGetRowsBack, "rows[%d] = %d is outside [0, %d)", i, r, dst.Ne[1])
		}
		g.Row(i, 0, 0, row)
		for j, v := range row {
			acc[r][j] += v
		}
	}
	for r, a := range acc {
		dst.SetRow(int64(r), 0, 0, a)
	}
	return nil
}

// refRMSNormBack is ggml_compute_forward_rms_norm_back_f32: with Σx² and
// Σx·dz accumulated in float64 (of float32 products), dx = (dz + x·(-Σx·dz
// / (Σx² + eps·n)))·(1/√(Σx²/n + eps)).
func refRMSNormBack(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	dz, x := srcs[0], srcs[1]
	eps := p.F32("eps")
	n0 := x.Ne[0]
	cpu.RefParallel(x.NRows(), n0, func(lo, hi int64) {
		rx, rd := make([]float32, n0), make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			x.Row(i1, i2, i3, rx)
			dz.Row(i1, i2, i3, rd)
			var sxx, sxd float64
			for i, v := range rx {
				sxx += float64(v * v)
				sxd += float64(v * rd[i])
			}
			meanEps := float32(sxx)/float32(n0) + eps
			sumEps := float32(sxx) + eps*float32(n0)
			rrms := 1 / sqrtf32(meanEps)
			scaleX := float32(-sxd) / sumEps
			for i, v := range rx {
				rd[i] = (rd[i] + v*scaleX) * rrms
			}
			dst.SetRow(i1, i2, i3, rd)
		}
	})
	return nil
}

// refSoftMaxBack is ggml_compute_forward_soft_max_ext_back_f32: dx =
// scale·(dy - y·dy)·y per row (the dot product in float64 here; the CPU's
// SIMD dot rounds differently in the last bits). max_bias != 0 aborts on
// the CPU: et has no host math for it.
func refSoftMaxBack(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	if p.F32("max_bias") != 0 {
		return &ops.NoHostMathError{What: "soft_max_back with max_bias != 0 (ggml's CPU aborts on it too)"}
	}
	dy, y := srcs[0], srcs[1]
	scale := p.F32("scale")
	n0 := y.Ne[0]
	cpu.RefParallel(y.NRows(), n0, func(lo, hi int64) {
		ry, rd := make([]float32, n0), make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(y.Ne, r)
			y.Row(i1, i2, i3, ry)
			dy.Row(i1, i2, i3, rd)
			var dot float64
			for i, v := range ry {
				dot += float64(v * rd[i])
			}
			d := float32(dot)
			for i, v := range ry {
				rd[i] = ((rd[i] - d) * v) * scale
			}
			dst.SetRow(i1, i2, i3, rd)
		}
	})
	return nil
}

// refDiagMaskInf copies x and sets element (i0, i1) of every matrix to
// -inf where i0 > n_past + i1.
func refDiagMaskInf(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	nPast := p.Int("n_past")
	inf := float32(math.Inf(-1))
	normRows(dst, x, func(y []float32) {})
	dst.ForEach(func(i0, i1, i2, i3 int64) {
		if i0 >= nPast && i0 > nPast+i1 {
			dst.SetF32(i0, i1, i2, i3, inf)
		}
	})
	return nil
}

// refRopeBack is ggml's rope with sin negated (forward = false in
// ggml_compute_forward_rope_flt): the rotation by -theta. theta is
// pos·theta_scale^i / freq_factor (YaRN-mixed linearly), so negating the
// positions negates every angle exactly in float32; rope_back(dy, pos) is
// rope(dy, -pos), with whatever modes and rope offset et's rope has
// (ggml's mode number is matched through RopeModeValue, and n_offs is
// passed on when rope has that param); the others have no host math.
func (ks *Kernels) refRopeBack(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	mode := ""
	for _, name := range []string{"normal", "neox", "mrope", "vision", "imrope"} {
		if v, err := ops.RopeModeValue(name); err == nil && int64(v) == p.Int("mode") {
			mode = name
		}
	}
	if mode == "" {
		return &ops.NoHostMathError{What: fmt.Sprintf("rope_back mode %d", p.Int("mode"))}
	}
	hasOffs := ropeHasParam("n_offs")
	if p.Int("n_offs") != 0 && !hasOffs {
		return &ops.NoHostMathError{What: "rope_back with n_offs != 0"}
	}
	fp := ops.Params{}
	for k, v := range p {
		if k == "n_offs" && !hasOffs {
			continue
		}
		fp[k] = v
	}
	fp["mode"] = mode
	// rope's own checks (n_dims, sections, positions) apply.
	if _, _, err := ops.InferRope([]*ops.Tensor{srcs[0], srcs[1]}, fp); err != nil {
		return &ops.NoHostMathError{What: "rope_back: " + err.Error()}
	}
	pos := srcs[1]
	neg := ops.New(ops.I32, pos.Ne[:]...)
	pos.ForEach(func(i0, i1, i2, i3 int64) { neg.SetInt(i0, i1, i2, i3, -pos.Int(i0, i1, i2, i3)) })
	s := append([]*ops.Tensor{srcs[0], neg}, srcs[2:]...)
	return ks.refRope(dst, s, fp)
}

// refCrossEntropyLoss is ggml_compute_forward_cross_entropy_loss_f32 on
// one thread: per row, log_softmax(logits) (Σexp in float64, its log in
// float32), times labels, summed (float64, rounded); the row sums added
// in float32; the total times -1/nrows.
func refCrossEntropyLoss(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	a, b := srcs[0], srcs[1]
	n0 := a.Ne[0]
	ra, rb := make([]float32, n0), make([]float32, n0)
	var total float32
	for r := int64(0); r < a.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(a.Ne, r)
		a.Row(i1, i2, i3, ra)
		b.Row(i1, i2, i3, rb)
		mx := float32(math.Inf(-1))
		for _, v := range ra {
			mx = max32C(mx, v)
		}
		var sum float64
		for i, v := range ra {
			ra[i] = v - mx
			sum += float64(cpu.Expf32(ra[i]))
		}
		lse := cpu.Logf32(float32(sum))
		var rs float64
		for i := range ra {
			rs += float64((ra[i] - lse) * rb[i])
		}
		total += float32(rs)
	}
	dst.SetF32(0, 0, 0, 0, total*(-1/float32(a.NRows())))
	return nil
}

// refCrossEntropyLossBack is ggml_compute_forward_cross_entropy_loss_back_f32:
// (softmax(logits) - labels)·grad/nrows per row, the softmax sum in
// float64.
func refCrossEntropyLossBack(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	g, a, b := srcs[0], srcs[1], srcs[2]
	d := g.F32(0, 0, 0, 0) / float32(a.NRows())
	n0 := a.Ne[0]
	ra, rb := make([]float32, n0), make([]float32, n0)
	for r := int64(0); r < a.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(a.Ne, r)
		a.Row(i1, i2, i3, ra)
		b.Row(i1, i2, i3, rb)
		mx := float32(math.Inf(-1))
		for _, v := range ra {
			mx = max32C(mx, v)
		}
		var sum float64
		for i, v := range ra {
			ra[i] = cpu.Expf32(v - mx)
			sum += float64(ra[i])
		}
		inv := float32(1 / sum)
		for i := range ra {
			ra[i] = (ra[i]*inv - rb[i]) * d
		}
		dst.SetRow(i1, i2, i3, ra)
	}
	return nil
}

// refOptStepAdamW is one ggml AdamW step with params [alpha, beta1,
// beta2, eps, wd, beta1h, beta2h]: m' = m·β1 + g·(1-β1), v' = v·β2 +
// g²·(1-β2), w' = w·(1 - α·wd) - α·(m'·β1h)/(√(v'·β2h) + eps). The result
// is w'; ggml also writes m' and v' back into m and v, which et's host
// math leaves unchanged (the case's output is the weights).
func refOptStepAdamW(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	w, g, m, v, pr := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	var q [7]float32
	for i := range q {
		q[i] = pr.F32(int64(i), 0, 0, 0)
	}
	alpha, b1, b2, eps, wd, b1h, b2h := q[0], q[1], q[2], q[3], q[4], q[5], q[6]
	keep := 1 - alpha*wd
	w.ForEach(func(i0, i1, i2, i3 int64) {
		gi := g.F32(i0, i1, i2, i3)
		mi := m.F32(i0, i1, i2, i3)*b1 + gi*(1-b1)
		vi := v.F32(i0, i1, i2, i3)*b2 + gi*gi*(1-b2)
		mh := mi * b1h
		vh := sqrtf32(vi*b2h) + eps
		dst.SetF32(i0, i1, i2, i3, w.F32(i0, i1, i2, i3)*keep-alpha*mh/vh)
	})
	return nil
}

// refOptStepSGD is one ggml SGD step with params [alpha, wd]: w' = w·(1 -
// α·wd) - α·g.
func refOptStepSGD(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	w, g, pr := srcs[0], srcs[1], srcs[2]
	alpha := pr.F32(0, 0, 0, 0)
	keep := 1 - alpha*pr.F32(1, 0, 0, 0)
	w.ForEach(func(i0, i1, i2, i3 int64) {
		dst.SetF32(i0, i1, i2, i3, w.F32(i0, i1, i2, i3)*keep-alpha*g.F32(i0, i1, i2, i3))
	})
	return nil
}

// ropeHasParam reports whether the rope op has a param of that name. It
// is set in init: a function that reads the catalog cannot be part of the
// catalog's initialisation.
var ropeHasParam func(name string) bool

func init() {
	ropeHasParam = func(name string) bool {
		info, ok := ops.Lookup(string(ops.OpRope))
		return ok && info.Param(name) != nil
	}
}

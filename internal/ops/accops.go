package ops

import (
	"fmt"
	"math"
)

// acc, add_id, arange, timestep_embedding and out_prod, as ggml's CPU
// computes them (ggml-cpu/ops.cpp), plus the shapes of the model-specific
// ops et has no host math for (gated_linear_attn, lightning_indexer, the
// DeepSeek-V4 hyper-connection ops).

func inferAcc(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpAcc, "a", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantTypes(OpAcc, "b", b.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if b.NElements() > a.NElements() {
		return 0, a.Ne, shapeErr(OpAcc, "b %s has more elements than a %s", b.ShapeString(), a.ShapeString())
	}
	nb := accStrides(a, p)
	last := p.Int("offset")
	for d := 0; d < MaxDims; d++ {
		if nb[d] < 0 {
			return 0, a.Ne, &ParamError{Op: OpAcc, Param: fmt.Sprintf("nb%d", d), Msg: "negative stride"}
		}
		last += (b.Ne[d] - 1) * nb[d]
	}
	if p.Int("offset") < 0 || last+4 > int64(a.NBytes()) {
		return 0, a.Ne, shapeErr(OpAcc, "the view of b's shape %s at offset %d with strides %v ends at byte %d, past a's %d bytes", b.ShapeString(), p.Int("offset"), nb, last+4, a.NBytes())
	}
	return F32, a.Ne, nil
}

// accStrides are the byte strides of the view acc adds b into: 4, then
// nb1..nb3 (0 means a's own stride).
func accStrides(a *Tensor, p Params) [MaxDims]int64 {
	full := ContiguousStrides(a.Type, a.Ne)
	nb := [MaxDims]int64{int64(full[0])}
	for d, k := range []string{"nb1", "nb2", "nb3"} {
		nb[d+1] = p.Int(k)
		if nb[d+1] == 0 {
			nb[d+1] = int64(full[d+1])
		}
	}
	return nb
}

// refAcc is a copied into dst, then dst's view (accStrides, offset) +=
// b, in float32.
func refAcc(dst *Tensor, srcs []*Tensor, p Params) error {
	a, b := srcs[0], srcs[1]
	normRows(dst, a, func([]float32) {})
	nb := accStrides(a, p)
	off := p.Int("offset")
	view := &Tensor{Type: F32, Ne: b.Ne, Buf: dst.Buf, Offs: dst.Offs + uint64(off)}
	for d := range nb {
		view.Nb[d] = uint64(nb[d])
	}
	b.forEach(func(i0, i1, i2, i3 int64) {
		view.SetF32(i0, i1, i2, i3, view.F32(i0, i1, i2, i3)+b.F32(i0, i1, i2, i3))
	})
	return nil
}

func inferAddID(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b, ids := srcs[0], srcs[1], srcs[2]
	if err := wantTypes(OpAddID, "a", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantTypes(OpAddID, "b", b.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if ids.Type != I32 {
		return 0, a.Ne, shapeErr(OpAddID, "ids is %s, want i32", ids.Type)
	}
	if a.Ne[0] != b.Ne[0] || a.Ne[1] != ids.Ne[0] || a.Ne[2] != ids.Ne[1] {
		return 0, a.Ne, shapeErr(OpAddID, "a %s, b %s, ids %s: want a.ne0 = b.ne0, a.ne1 = ids.ne0, a.ne2 = ids.ne1", a.ShapeString(), b.ShapeString(), ids.ShapeString())
	}
	return F32, a.Ne, nil
}

func refAddID(dst *Tensor, srcs []*Tensor, _ Params) error {
	a, b, ids := srcs[0], srcs[1], srcs[2]
	n0 := a.Ne[0]
	ra, rb := make([]float32, n0), make([]float32, n0)
	for r := int64(0); r < a.NRows(); r++ {
		i1, i2, i3 := rowIndex(a.Ne, r)
		e := ids.Int(i1, i2, 0, 0)
		if e < 0 || e >= b.Ne[1] {
			return shapeErr(OpAddID, "ids[%d, %d] = %d is outside [0, %d)", i1, i2, e, b.Ne[1])
		}
		a.Row(i1, i2, i3, ra)
		b.Row(e, 0, 0, rb)
		for i := range ra {
			ra[i] += rb[i]
		}
		dst.SetRow(i1, i2, i3, ra)
	}
	return nil
}

// arangeSteps is ggml_arange's element count, (int64) ceilf((stop -
// start) / step) in float32.
func arangeSteps(p Params) int64 {
	start, stop, step := p.F32("start"), p.F32("stop"), p.F32("step")
	return int64(float32(math.Ceil(float64((stop - start) / step))))
}

func inferArange(_ []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	if !(p.F32("stop") > p.F32("start")) {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpArange, Param: "stop", Msg: "must be greater than start"}
	}
	n := arangeSteps(p)
	if n <= 0 || n > 1<<31 {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpArange, Param: "step", Msg: fmt.Sprintf("gives %d elements", n)}
	}
	return F32, [MaxDims]int64{n, 1, 1, 1}, nil
}

func refArange(dst *Tensor, _ []*Tensor, p Params) error {
	start, step := p.F32("start"), p.F32("step")
	for i := int64(0); i < dst.Ne[0]; i++ {
		dst.SetF32(i, 0, 0, 0, start+step*float32(i))
	}
	return nil
}

func inferTimestepEmbedding(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpTimestepEmbedding, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	// The timesteps are x's first row: a row of an empty x (a zero
	// among ne1..ne3) has no values to read.
	if x.Ne[0] > 0 && x.NElements() == 0 {
		return 0, x.Ne, shapeErr(OpTimestepEmbedding, "x %s has no elements, but ne0 = %d timesteps", x.ShapeString(), x.Ne[0])
	}
	dim := p.Int("dim")
	if dim <= 0 {
		return 0, x.Ne, &ParamError{Op: OpTimestepEmbedding, Param: "dim", Msg: "must be positive"}
	}
	if p.Int("max_period") <= 0 {
		return 0, x.Ne, &ParamError{Op: OpTimestepEmbedding, Param: "max_period", Msg: "must be positive"}
	}
	return F32, [MaxDims]int64{dim, x.Ne[0], 1, 1}, nil
}

// refTimestepEmbedding: for timestep t = x[i] and j < dim/2, freq =
// expf(-logf(max_period)·j/half), dst[j, i] = cos(t·freq), dst[j + half,
// i] = sin(t·freq); an odd dim leaves a trailing 0.
func refTimestepEmbedding(dst *Tensor, srcs []*Tensor, p Params) error {
	x := srcs[0]
	dim := p.Int("dim")
	half := dim / 2
	lmp := logf32(float32(p.Int("max_period")))
	for i := int64(0); i < x.Ne[0]; i++ {
		t := x.F32(i, 0, 0, 0)
		for j := int64(0); j < half; j++ {
			freq := expf32(-lmp * float32(j) / float32(half))
			arg := t * freq
			dst.SetF32(j, i, 0, 0, cosf32(arg))
			dst.SetF32(j+half, i, 0, 0, sinf32(arg))
		}
		if dim%2 != 0 {
			dst.SetF32(2*half, i, 0, 0, 0)
		}
	}
	return nil
}

func inferOutProd(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if !isFloatType(a.Type) || !isFloatType(b.Type) {
		return 0, a.Ne, shapeErr(OpOutProd, "a, b are %s, %s, want float or quantized types", a.Type, b.Type)
	}
	if a.Ne[1] != b.Ne[1] {
		return 0, a.Ne, shapeErr(OpOutProd, "a.ne1 = %d != b.ne1 = %d (the shared dimension k)", a.Ne[1], b.Ne[1])
	}
	for d := 2; d < MaxDims; d++ {
		if a.Ne[d] == 0 {
			return 0, a.Ne, shapeErr(OpOutProd, "a.ne%d = 0: b cannot be a broadcast of it", d)
		}
		if b.Ne[d]%a.Ne[d] != 0 {
			return 0, a.Ne, shapeErr(OpOutProd, "b.ne%d = %d is not a multiple of a.ne%d = %d", d, b.Ne[d], d, a.Ne[d])
		}
	}
	if a.Nb[0] > a.Nb[1] {
		return 0, a.Ne, shapeErr(OpOutProd, "a is transposed (nb0 > nb1)")
	}
	return F32, [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}, nil
}

// refOutProd: dst[i0, i1, i2, i3] = Σ_k a[i0, k, i2/(ne2/a.ne2), i3/(ne3/a.ne3)]·b[i1, k, i2, i3],
// accumulated in float32 in k order (ggml_vec_mad_f32).
func refOutProd(dst *Tensor, srcs []*Tensor, _ Params) error {
	a, b := srcs[0], srcs[1]
	ne := dst.Ne
	K := a.Ne[1]
	d2, d3 := ne[2]/a.Ne[2], ne[3]/a.Ne[3]
	refParallel(ne[1]*ne[2]*ne[3], ne[0]*K, func(lo, hi int64) {
		acc := make([]float32, ne[0])
		col := make([]float32, ne[0])
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(ne, r)
			clear(acc)
			for k := int64(0); k < K; k++ {
				a.Row(k, i2/d2, i3/d3, col)
				bv := b.F32(i1, k, i2, i3)
				for i := range acc {
					acc[i] += col[i] * bv
				}
			}
			dst.SetRow(i1, i2, i3, acc)
		}
	})
	return nil
}

// flopsLightningIndexer is test_lightning_indexer's op_flops: ((2·hsk +
// 2)·nh + 1)·kv·nb·ns.
func flopsLightningIndexer(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	q, k := srcs[0], srcs[1]
	return ((2*q.Ne[0]+2)*q.Ne[1] + 1) * k.Ne[2] * q.Ne[2] * q.Ne[3]
}

func inferGatedLinearAttn(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	k, v, q, g, s := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	S, H, T := k.Ne[0], k.Ne[1], k.Ne[2]
	for i, x := range []*Tensor{v, q, g} {
		if x.Ne[0] != S || x.Ne[1] != H || x.Ne[2] != T {
			return 0, k.Ne, shapeErr(OpGatedLinearAttn, "%s %s differs from k %s", []string{"v", "q", "g"}[i], x.ShapeString(), k.ShapeString())
		}
	}
	nSeqs := s.Ne[1]
	if nSeqs == 0 {
		return 0, k.Ne, shapeErr(OpGatedLinearAttn, "state %s has no sequences (ne1 = 0)", s.ShapeString())
	}
	if s.NElements() != S*S*H*nSeqs {
		return 0, k.Ne, shapeErr(OpGatedLinearAttn, "state %s does not hold S·S·H·n_seqs = %d values", s.ShapeString(), S*S*H*nSeqs)
	}
	return F32, [MaxDims]int64{S * H, T + S*nSeqs, 1, 1}, nil
}

func inferLightningIndexer(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	q, k, w, m := srcs[0], srcs[1], srcs[2], srcs[3]
	switch {
	case q.Type != F32 || w.Type != F32 || m.Type != F16:
		return 0, q.Ne, shapeErr(OpLightningIndexer, "q, weights, mask are %s, %s, %s, want f32, f32, f16", q.Type, w.Type, m.Type)
	case q.Ne[0] != k.Ne[0] || m.Ne[0] != k.Ne[2] || q.Ne[1] != w.Ne[0] || k.Ne[1] != 1 || m.Ne[1] != q.Ne[2] ||
		q.Ne[2] != w.Ne[1] || w.Ne[2] != 1 || m.Ne[2] != 1 || q.Ne[3] != k.Ne[3] || k.Ne[3] != w.Ne[3] || m.Ne[3] == 0 || w.Ne[3]%m.Ne[3] != 0:
		return 0, q.Ne, shapeErr(OpLightningIndexer, "q %s, k %s, weights %s, mask %s do not fit together (ggml_lightning_indexer)", q.ShapeString(), k.ShapeString(), w.ShapeString(), m.ShapeString())
	}
	return F32, [MaxDims]int64{k.Ne[2], q.Ne[2], 1, q.Ne[3]}, nil
}

func allF32(op Op, names []string, srcs []*Tensor) error {
	for i, s := range srcs {
		if s.Type != F32 {
			return shapeErr(op, "%s is %s, want f32", names[i], s.Type)
		}
	}
	return nil
}

func inferDSV4HCComb(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	mixes, scale, base := srcs[0], srcs[1], srcs[2]
	if err := allF32(OpDSV4HCComb, []string{"mixes", "scale", "base"}, srcs); err != nil {
		return 0, mixes.Ne, err
	}
	const hc = 4
	if mixes.Ne[0] != (2+hc)*hc || mixes.Ne[2] != 1 || mixes.Ne[3] != 1 || scale.Ne[0] < 3 || scale.NElements() != scale.Ne[0] || base.Ne[0] != mixes.Ne[0] || base.NElements() != base.Ne[0] {
		return 0, mixes.Ne, shapeErr(OpDSV4HCComb, "mixes %s, scale %s, base %s: want [24, n_tokens], [>= 3], [24]", mixes.ShapeString(), scale.ShapeString(), base.ShapeString())
	}
	if p.Int("n_iter") <= 0 {
		return 0, mixes.Ne, &ParamError{Op: OpDSV4HCComb, Param: "n_iter", Msg: "must be positive"}
	}
	return F32, [MaxDims]int64{hc, hc, mixes.Ne[1], 1}, nil
}

func inferDSV4HCPre(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x, w := srcs[0], srcs[1]
	if err := allF32(OpDSV4HCPre, []string{"x", "weights"}, srcs); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[3] != 1 || w.Ne[0] != x.Ne[1] || w.Ne[1] != x.Ne[2] || w.Ne[2] != 1 || w.Ne[3] != 1 {
		return 0, x.Ne, shapeErr(OpDSV4HCPre, "x %s, weights %s: want [n_embd, hc, n_tokens], [hc, n_tokens]", x.ShapeString(), w.ShapeString())
	}
	return F32, [MaxDims]int64{x.Ne[0], x.Ne[2], 1, 1}, nil
}

func inferDSV4HCPost(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x, res, post, comb := srcs[0], srcs[1], srcs[2], srcs[3]
	if err := allF32(OpDSV4HCPost, []string{"x", "residual", "post", "comb"}, srcs); err != nil {
		return 0, x.Ne, err
	}
	nE, nT, hc := x.Ne[0], x.Ne[1], res.Ne[1]
	if x.Ne[2] != 1 || x.Ne[3] != 1 || res.Ne[0] != nE || res.Ne[2] != nT || res.Ne[3] != 1 ||
		post.Ne != [MaxDims]int64{hc, nT, 1, 1} || comb.Ne != [MaxDims]int64{hc, hc, nT, 1} {
		return 0, x.Ne, shapeErr(OpDSV4HCPost, "x %s, residual %s, post %s, comb %s: want [n_embd, n_tokens], [n_embd, hc, n_tokens], [hc, n_tokens], [hc, hc, n_tokens]",
			x.ShapeString(), res.ShapeString(), post.ShapeString(), comb.ShapeString())
	}
	return F32, [MaxDims]int64{nE, hc, nT, 1}, nil
}

// refGatedLinearAttn is ggml_compute_forward_gla_f32: for each sequence
// (T/n_seqs tokens), head h and token t, with S the head size,
//
//	state[h][i][j] = v[j]·k[i] + state[h][i][j]·g[i]
//	y[h·S + j]    += state[h][i][j]·q[i]·scale   (i ascending, float32)
//
// starting from the state source; the result is the y rows, then the
// final state of each sequence (S·n_seqs rows of S·H).
func refGatedLinearAttn(dst *Tensor, srcs []*Tensor, p Params) error {
	k, v, q, g, st := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	S, H, T := k.Ne[0], k.Ne[1], k.Ne[2]
	nSeqs := st.Ne[1]
	if T%nSeqs != 0 {
		return shapeErr(OpGatedLinearAttn, "%d tokens do not split into %d sequences", T, nSeqs)
	}
	scale := p.F32("scale")
	C := S * H
	per := T / nSeqs
	state := make([]float32, S*S*H)
	y := make([]float32, C)
	kr, vr, qr, gr := make([]float32, S), make([]float32, S), make([]float32, S), make([]float32, S)
	for s := int64(0); s < nSeqs; s++ {
		for i := range state {
			state[i] = st.F32(int64(i), s, 0, 0)
		}
		for tt := int64(0); tt < per; tt++ {
			t := s*per + tt
			clear(y)
			for h := int64(0); h < H; h++ {
				k.Row(h, t, 0, kr)
				v.Row(h, t, 0, vr)
				q.Row(h, t, 0, qr)
				g.Row(h, t, 0, gr)
				for i := int64(0); i < S; i++ {
					qi := qr[i] * scale
					row := state[h*S*S+i*S:][:S]
					for j := int64(0); j < S; j++ {
						tmp := vr[j]*kr[i] + row[j]*gr[i]
						y[h*S+j] += tmp * qi
						row[j] = tmp
					}
				}
			}
			dst.SetRow(t, 0, 0, y)
		}
		for r := int64(0); r < S; r++ {
			dst.SetRow(T+s*S+r, 0, 0, state[r*C:(r+1)*C])
		}
	}
	return nil
}

// refLightningIndexer is ggml_compute_forward_lightning_indexer: for
// stream s, token t and key position j, dst[j, t, 0, s] = Σ_h max(q[:, h,
// t, s]·k[:, 0, j, s], 0)·weights[h, t, 0, s] + mask[j, t, 0, s % mask.ne3]
// (the dot product in float64, rounded; the head sum in float32).
func refLightningIndexer(dst *Tensor, srcs []*Tensor, _ Params) error {
	q, k, w, m := srcs[0], srcs[1], srcs[2], srcs[3]
	E, nH, nT, nS, nKV := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3], k.Ne[2]
	refParallel(nS*nT, nKV*nH*E, func(lo, hi int64) {
		qr, kr := make([]float32, E), make([]float32, E)
		qs := make([][]float32, nH)
		for r := lo; r < hi; r++ {
			t, s := r%nT, r/nT
			for h := int64(0); h < nH; h++ {
				q.Row(h, t, s, qr)
				qs[h] = append(qs[h][:0], qr...)
			}
			for j := int64(0); j < nKV; j++ {
				k.Row(0, j, s, kr)
				var score float32
				for h := int64(0); h < nH; h++ {
					var dot float64
					for i, v := range qs[h] {
						dot += float64(v) * float64(kr[i])
					}
					score += max(float32(dot), 0) * w.F32(h, t, 0, s)
				}
				dst.SetF32(j, t, 0, s, score+m.F32(j, t, 0, s%m.Ne[3]))
			}
		}
	})
	return nil
}

// refDSV4HCComb is ggml_compute_forward_dsv4_hc_comb_f32 (hc = 4), in
// float32: per token, c[d, s] = mixes[8 + d + 4s]·scale[2] + base[8 + d +
// 4s]; a softmax over d for each s, plus eps; then Sinkhorn
// normalisation: columns (Σ over s, starting from eps), then n_iter - 1
// times rows and columns. dst[d, s, token] = c[d, s].
func refDSV4HCComb(dst *Tensor, srcs []*Tensor, p Params) error {
	mixes, scale, base := srcs[0], srcs[1], srcs[2]
	const hc = 4
	eps := p.F32("eps")
	nIter := p.Int("n_iter")
	sc := scale.F32(2, 0, 0, 0)
	var c [hc * hc]float32
	norm := func(cols bool) {
		for a := 0; a < hc; a++ {
			at := func(b int) *float32 {
				if cols {
					return &c[a+hc*b]
				}
				return &c[b+hc*a]
			}
			sum := eps
			for b := 0; b < hc; b++ {
				sum += *at(b)
			}
			inv := 1 / sum
			for b := 0; b < hc; b++ {
				*at(b) *= inv
			}
		}
	}
	for t := int64(0); t < mixes.Ne[1]; t++ {
		for s := 0; s < hc; s++ {
			mx := float32(math.Inf(-1))
			for d := 0; d < hc; d++ {
				idx := d + hc*s
				c[idx] = mixes.F32(int64(2*hc+idx), t, 0, 0)*sc + base.F32(int64(2*hc+idx), 0, 0, 0)
				mx = max32C(mx, c[idx])
			}
			var sum float32
			for d := 0; d < hc; d++ {
				c[d+hc*s] = expf32(c[d+hc*s] - mx)
				sum += c[d+hc*s]
			}
			inv := 1 / sum
			for d := 0; d < hc; d++ {
				c[d+hc*s] = c[d+hc*s]*inv + eps
			}
		}
		norm(true)
		for i := int64(1); i < nIter; i++ {
			norm(false)
			norm(true)
		}
		for s := 0; s < hc; s++ {
			for d := 0; d < hc; d++ {
				dst.SetF32(int64(d), int64(s), t, 0, c[d+hc*s])
			}
		}
	}
	return nil
}

// refDSV4HCPre is ggml_compute_forward_dsv4_hc_pre_f32: dst[i, t] =
// Σ_h x[i, h, t]·weights[h, t], in float32.
func refDSV4HCPre(dst *Tensor, srcs []*Tensor, _ Params) error {
	x, w := srcs[0], srcs[1]
	for t := int64(0); t < x.Ne[2]; t++ {
		for i := int64(0); i < x.Ne[0]; i++ {
			var sum float32
			for h := int64(0); h < x.Ne[1]; h++ {
				sum += x.F32(i, h, t, 0) * w.F32(h, t, 0, 0)
			}
			dst.SetF32(i, t, 0, 0, sum)
		}
	}
	return nil
}

// refDSV4HCPost is ggml_compute_forward_dsv4_hc_post_f32: dst[i, d, t] =
// x[i, t]·post[d, t] + Σ_s residual[i, s, t]·comb[d, s, t], in float32.
func refDSV4HCPost(dst *Tensor, srcs []*Tensor, _ Params) error {
	x, res, post, comb := srcs[0], srcs[1], srcs[2], srcs[3]
	hc := res.Ne[1]
	for t := int64(0); t < x.Ne[1]; t++ {
		for d := int64(0); d < hc; d++ {
			for i := int64(0); i < x.Ne[0]; i++ {
				sum := x.F32(i, t, 0, 0) * post.F32(d, t, 0, 0)
				for s := int64(0); s < hc; s++ {
					sum += res.F32(i, s, t, 0) * comb.F32(d, s, t, 0)
				}
				dst.SetF32(i, d, t, 0, sum)
			}
		}
	}
	return nil
}

package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// refAcc is a copied into dst, then dst's view (accStrides, offset) +=
// b, in float32.
func refAcc(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	a, b := srcs[0], srcs[1]
	normRows(dst, a, func([]float32) {})
	nb := ops.AccStrides(a, p)
	off := p.Int("offset")
	view := &ops.Tensor{Type: ops.F32, Ne: b.Ne, Buf: dst.Buf, Offs: dst.Offs + uint64(off)}
	for d := range nb {
		view.Nb[d] = uint64(nb[d])
	}
	b.ForEach(func(i0, i1, i2, i3 int64) {
		view.SetF32(i0, i1, i2, i3, view.F32(i0, i1, i2, i3)+b.F32(i0, i1, i2, i3))
	})
	return nil
}

func refAddID(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	a, b, ids := srcs[0], srcs[1], srcs[2]
	n0 := a.Ne[0]
	ra, rb := make([]float32, n0), make([]float32, n0)
	for r := int64(0); r < a.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(a.Ne, r)
		e := ids.Int(i1, i2, 0, 0)
		if e < 0 || e >= b.Ne[1] {
			return ops.ShapeErr(ops.OpAddID, "ids[%d, %d] = %d is outside [0, %d)", i1, i2, e, b.Ne[1])
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

func refArange(dst *ops.Tensor, _ []*ops.Tensor, p ops.Params) error {
	start, step := p.F32("start"), p.F32("step")
	for i := int64(0); i < dst.Ne[0]; i++ {
		dst.SetF32(i, 0, 0, 0, start+step*float32(i))
	}
	return nil
}

// refTimestepEmbedding: for timestep t = x[i] and j < dim/2, freq =
// expf(-logf(max_period)·j/half), dst[j, i] = cos(t·freq), dst[j + half,
// i] = sin(t·freq); an odd dim leaves a trailing 0.
func refTimestepEmbedding(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	dim := p.Int("dim")
	half := dim / 2
	lmp := cpu.Logf32(float32(p.Int("max_period")))
	for i := int64(0); i < x.Ne[0]; i++ {
		t := x.F32(i, 0, 0, 0)
		for j := int64(0); j < half; j++ {
			freq := cpu.Expf32(-lmp * float32(j) / float32(half))
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

// refOutProd: dst[i0, i1, i2, i3] = Σ_k a[i0, k, i2/(ne2/a.ne2), i3/(ne3/a.ne3)]·b[i1, k, i2, i3],
// accumulated in float32 in k order (ggml_vec_mad_f32).
func refOutProd(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	a, b := srcs[0], srcs[1]
	ne := dst.Ne
	K := a.Ne[1]
	d2, d3 := ne[2]/a.Ne[2], ne[3]/a.Ne[3]
	cpu.RefParallel(ne[1]*ne[2]*ne[3], ne[0]*K, func(lo, hi int64) {
		acc := make([]float32, ne[0])
		col := make([]float32, ne[0])
		for r := lo; r < hi; r++ {
			i1, i2, i3 := ops.RowIndex(ne, r)
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

// refGatedLinearAttn is ggml_compute_forward_gla_f32: for each sequence
// (T/n_seqs tokens), head h and token t, with S the head size,
//
//	state[h][i][j] = v[j]·k[i] + state[h][i][j]·g[i]
//	y[h·S + j]    += state[h][i][j]·q[i]·scale   (i ascending, float32)
//
// starting from the state source; the result is the y rows, then the
// final state of each sequence (S·n_seqs rows of S·H).
func refGatedLinearAttn(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, v, q, g, st := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	S, H, T := k.Ne[0], k.Ne[1], k.Ne[2]
	nSeqs := st.Ne[1]
	if T%nSeqs != 0 {
		return ops.ShapeErr(ops.OpGatedLinearAttn, "%d tokens do not split into %d sequences", T, nSeqs)
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
func refLightningIndexer(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	q, k, w, m := srcs[0], srcs[1], srcs[2], srcs[3]
	E, nH, nT, nS, nKV := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3], k.Ne[2]
	cpu.RefParallel(nS*nT, nKV*nH*E, func(lo, hi int64) {
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
func refDSV4HCComb(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
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
				c[d+hc*s] = cpu.Expf32(c[d+hc*s] - mx)
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
func refDSV4HCPre(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
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
func refDSV4HCPost(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
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

package ops

import (
	"fmt"
	"math"
)

// gated_delta_net: the gated delta rule of Qwen3-Next / Kimi linear
// attention (ggml_gated_delta_net(q, k, v, g, beta, state, K)).
//
//	q [S_v, H_q, T, n_seqs_q], k [S_v, H_k, T, n_seqs_k]
//	v [S_v, H, T, n_seqs]
//	g [1 or S_v, H, T, n_seqs]   (S_v: per-channel gate, "KDA")
//	beta [1, H, T, n_seqs]
//	state [S_v, S_v, H, n_seqs]  initial state
//
// Value head h reads q head h % H_q and k head h % H_k (tiled), and
// sequence n reads q/k sequence n / (n_seqs/n_seqs_q). The state is kept
// transposed as on the CPU: M[j][i] = S[i][j] is element (i, j, h, n) of
// state. Per token, in float32:
//
//	M[j][i] *= exp(g[i])  (KDA) or exp(g[0])
//	delta[j] = (v[j] - M[j]·k) · beta
//	M[j][i] += k[i]·delta[j]
//	out[j]   = (M[j]·q) / sqrtf(S_v)
//
// The result is [S_v·H, T·n_seqs + K·S_v·n_seqs]: the output rows (row
// n·T + t, column h·S_v + j), then K state snapshots of S_v·S_v·H·n_seqs
// values in state's layout; slot s holds the state after token T-1-s
// (slot 0 = final). Slots s >= T are not written (ggml leaves them to the
// caller). Dot products use dotF32 (float32 partial sums, like ggml's SIMD
// ggml_vec_dot_f32).

type gdnDims struct {
	sv, h, hq, hk, t, n, nq, nk int64
	kda                         bool
}

func gdnShape(srcs []*Tensor) (gdnDims, error) {
	q, k, v, g, beta, state := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	var d gdnDims
	for i, x := range srcs {
		if err := wantTypes(OpGatedDeltaNet, []string{"q", "k", "v", "g", "beta", "state"}[i], x.Type, F32); err != nil {
			return d, err
		}
	}
	d = gdnDims{sv: v.Ne[0], h: v.Ne[1], hq: q.Ne[1], hk: k.Ne[1], t: v.Ne[2], n: v.Ne[3], nq: q.Ne[3], nk: k.Ne[3], kda: g.Ne[0] == v.Ne[0]}
	switch {
	case q.Ne[0] != d.sv || k.Ne[0] != d.sv:
		return d, shapeErr(OpGatedDeltaNet, "q.ne0 = %d and k.ne0 = %d, want S_v = v.ne0 = %d", q.Ne[0], k.Ne[0], d.sv)
	case q.Ne[2] != d.t || k.Ne[2] != d.t:
		return d, shapeErr(OpGatedDeltaNet, "q.ne2 = %d and k.ne2 = %d, want n_tokens = v.ne2 = %d", q.Ne[2], k.Ne[2], d.t)
	case d.hq == 0 || d.hk == 0:
		return d, shapeErr(OpGatedDeltaNet, "q or k has no heads")
	case d.nq == 0 || d.nk == 0 || d.n%d.nq != 0 || d.n%d.nk != 0:
		return d, shapeErr(OpGatedDeltaNet, "n_seqs = %d is not a multiple of q.ne3 = %d and k.ne3 = %d", d.n, d.nq, d.nk)
	case g.Ne[0] != 1 && g.Ne[0] != d.sv:
		return d, shapeErr(OpGatedDeltaNet, "g.ne0 = %d, want 1 or S_v = %d", g.Ne[0], d.sv)
	case g.Ne[1] != d.h || g.Ne[2] != d.t || g.Ne[3] != d.n:
		return d, shapeErr(OpGatedDeltaNet, "g %s, want [1 or S_v, H = %d, T = %d, n_seqs = %d]", g.ShapeString(), d.h, d.t, d.n)
	case beta.Ne != [MaxDims]int64{1, d.h, d.t, d.n}:
		return d, shapeErr(OpGatedDeltaNet, "beta %s, want [1, %d, %d, %d]", beta.ShapeString(), d.h, d.t, d.n)
	case state.Ne != [MaxDims]int64{d.sv, d.sv, d.h, d.n}:
		return d, shapeErr(OpGatedDeltaNet, "state %s, want [S_v, S_v, H, n_seqs] = [%d, %d, %d, %d]", state.ShapeString(), d.sv, d.sv, d.h, d.n)
	}
	return d, nil
}

func inferGatedDeltaNet(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	d, err := gdnShape(srcs)
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	k := p.Int("K")
	if k < 1 {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpGatedDeltaNet, Param: "K", Msg: fmt.Sprintf("%d, want >= 1 snapshot slot", k)}
	}
	return F32, [MaxDims]int64{d.sv * d.h, d.t*d.n + k*d.sv*d.n, 1, 1}, nil
}

func refGatedDeltaNet(dst *Tensor, srcs []*Tensor, p Params) error {
	d, err := gdnShape(srcs)
	if err != nil {
		return err
	}
	q, k, v, g, beta, state := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	slots := p.Int("K")
	sv := d.sv
	scale := 1 / float32(math.Sqrt(float64(float32(sv))))
	attnElems := sv * d.h * d.t * d.n
	slotSize := sv * sv * d.h * d.n
	refParallel(d.h*d.n, sv*sv*d.t, func(lo, hi int64) {
		m := make([]float32, sv*sv)
		qr := make([]float32, sv)
		kr := make([]float32, sv)
		vr := make([]float32, sv)
		gr := make([]float32, g.Ne[0])
		delta := make([]float32, sv)
		out := make([]float32, sv)
		for w := lo; w < hi; w++ {
			h, n := w%d.h, w/d.h
			iq, ik := h%d.hq, h%d.hk
			nq, nk := n/(d.n/d.nq), n/(d.n/d.nk)
			for j := int64(0); j < sv; j++ {
				state.Row(j, h, n, m[j*sv:(j+1)*sv])
			}
			for t := int64(0); t < d.t; t++ {
				q.Row(iq, t, nq, qr)
				k.Row(ik, t, nk, kr)
				v.Row(h, t, n, vr)
				g.Row(h, t, n, gr)
				b := beta.F32(0, h, t, n)
				if d.kda {
					for i, gv := range gr {
						delta[i] = expf32(gv)
					}
					for j := int64(0); j < sv; j++ {
						row := m[j*sv : (j+1)*sv]
						for i := range row {
							row[i] *= delta[i]
						}
					}
				} else {
					scaleRow(m, expf32(gr[0]))
				}
				for j := int64(0); j < sv; j++ {
					delta[j] = (vr[j] - dotF32(m[j*sv:(j+1)*sv], kr)) * b
				}
				for j := int64(0); j < sv; j++ {
					row := m[j*sv : (j+1)*sv]
					for i := range row {
						row[i] += kr[i] * delta[j]
					}
				}
				for j := int64(0); j < sv; j++ {
					out[j] = dotF32(m[j*sv:(j+1)*sv], qr) * scale
				}
				writeFlat(dst, ((n*d.t+t)*d.h+h)*sv, out)
				if slot := d.t - 1 - t; slot < slots {
					writeFlat(dst, attnElems+slot*slotSize+(n*d.h+h)*sv*sv, m)
				}
			}
		}
	})
	return nil
}

package graph

import (
	"math"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of model-specific ops ggml-et does not implement
// (registered through hostCaseBuilders).

// GATED_LINEAR_ATTN(type, head_count (32), head_size (64), n_seq_tokens
// (32), n_seqs (32)): test_gla: q, k, v, g [S, H, T] (T = n_seq_tokens ·
// n_seqs), state [S·S·H, n_seqs]; ggml_gated_linear_attn(k, v, q, g, s,
// S^-0.5).
func buildGatedLinearAttn(b *csBuilder) {
	t := b.typ("type", ops.F32)
	h := b.pos("head_count", 32)
	s := b.pos("head_size", 64)
	nst := b.pos("n_seq_tokens", 32)
	ns := b.pos("n_seqs", 32)
	if b.err != nil {
		return
	}
	ne := []int64{s, h, nst * ns}
	q := b.leaf("q", t, ne, defaultRange)
	k := b.leaf("k", t, ne, defaultRange)
	v := b.leaf("v", t, ne, defaultRange)
	g := b.leaf("g", t, ne, defaultRange)
	st := b.leaf("s", t, []int64{s * s * h, ns}, defaultRange)
	b.node("out", ops.OpGatedLinearAttn, map[string]any{"scale": math.Pow(float64(s), -0.5)}, k, v, q, g, st)
}

// LIGHTNING_INDEXER(hsk (128), nh (64), kv (256), nb (128), ns (1), nm
// (1), type_K (f16)): test_lightning_indexer: q f32 [hsk, nh, nb, ns], k
// [hsk, 1, kv, ns], weights f32 [nh, nb, 1, ns], mask f16 [kv, nb, 1, nm].
// The test fills the mask as a KQ mask (-inf/0); et fills it
// uniform(-1, 1), as for flash_attn_ext masks.
func buildLightningIndexer(b *csBuilder) {
	hsk := b.pos("hsk", 128)
	nh := b.pos("nh", 64)
	kv := b.pos("kv", 256)
	nb := b.pos("nb", 128)
	ns := b.pos("ns", 1)
	nm := b.pos("nm", 1)
	tk := b.typ("type_K", ops.F16)
	if b.err != nil {
		return
	}
	q := b.leaf("q", ops.F32, []int64{hsk, nh, nb, ns}, defaultRange)
	k := b.leaf("k", tk, []int64{hsk, 1, kv, ns}, defaultRange)
	w := b.leaf("w", ops.F32, []int64{nh, nb, 1, ns}, defaultRange)
	m := b.leaf("m", ops.F16, []int64{kv, nb, 1, nm}, defaultRange)
	b.node("out", ops.OpLightningIndexer, nil, q, k, w, m)
}

// DSV4_HC_COMB(n_tokens (17), n_iter (4), eps (1e-6)): test_dsv4_hc_comb
// with hc = 4: mixes [24, n_tokens] in [-2, 2], scale [3] in [-0.5, 0.5],
// base [24] in [-0.25, 0.25].
func buildDSV4HCComb(b *csBuilder) {
	nt := b.pos("n_tokens", 17)
	nIter := b.pos("n_iter", 4)
	eps := b.float("eps", 1e-6)
	if b.err != nil {
		return
	}
	mixes := b.leaf("mixes", ops.F32, []int64{24, nt}, "uniform(-2, 2)")
	scale := b.leaf("scale", ops.F32, []int64{3}, "uniform(-0.5, 0.5)")
	base := b.leaf("base", ops.F32, []int64{24}, "uniform(-0.25, 0.25)")
	b.node("out", ops.OpDSV4HCComb, map[string]any{"eps": eps, "n_iter": nIter}, mixes, scale, base)
}

// DSV4_HC_PRE(n_embd (31), n_tokens (17)): test_dsv4_hc_pre: x [n_embd,
// 4, n_tokens] in [-1, 1], weights [4, n_tokens] in [0, 1].
func buildDSV4HCPre(b *csBuilder) {
	ne := b.pos("n_embd", 31)
	nt := b.pos("n_tokens", 17)
	if b.err != nil {
		return
	}
	x := b.leaf("x", ops.F32, []int64{ne, 4, nt}, defaultRange)
	w := b.leaf("weights", ops.F32, []int64{4, nt}, "uniform(0, 1)")
	b.node("out", ops.OpDSV4HCPre, nil, x, w)
}

// DSV4_HC_POST(n_embd (31), n_tokens (17)): test_dsv4_hc_post: x [n_embd,
// n_tokens], residual [n_embd, 4, n_tokens] in [-1, 1], post [4,
// n_tokens] in [0, 2], comb [4, 4, n_tokens] in [0, 1].
func buildDSV4HCPost(b *csBuilder) {
	ne := b.pos("n_embd", 31)
	nt := b.pos("n_tokens", 17)
	if b.err != nil {
		return
	}
	x := b.leaf("x", ops.F32, []int64{ne, nt}, defaultRange)
	res := b.leaf("residual", ops.F32, []int64{ne, 4, nt}, defaultRange)
	post := b.leaf("post", ops.F32, []int64{4, nt}, "uniform(0, 2)")
	comb := b.leaf("comb", ops.F32, []int64{4, 4, nt}, "uniform(0, 1)")
	b.node("out", ops.OpDSV4HCPost, nil, x, res, post, comb)
}

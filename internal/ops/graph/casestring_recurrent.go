package graph

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the recurrent ops ggml-et dispatches (ssm_conv, ssm_scan, rwkv_wkv6/7, gated_delta_net).
// Keys, defaults and graphs follow the test-backend-ops test class of
// the same name (test_<op>, ggml d99724f2); where it gives no usable
// default, the choice is et's and the comment says so.

// SSM_CONV(type, ne_a=[4] (10,10,10,1), ne_b=[4]): sx is ne_a, c is ne_b.
// test_ssm_conv's default ne_b (3,3,1,1) does not match its default
// ne_a's d_inner, so et's default is [3, ne_a1, 1, 1].
func buildSSMConv(b *csBuilder) {
	t := b.typ("type", ops.F32)
	neA := b.shape("ne_a", 10, 10, 10, 1)
	if b.err != nil {
		return
	}
	neB := b.shape("ne_b", 3, neA[1], 1, 1)
	if b.err != nil {
		return
	}
	sx := b.leaf("sx", t, neA, defaultRange)
	c := b.leaf("c", t, neB, defaultRange)
	b.node("out", ops.OpSSMConv, nil, sx, c)
}

// SSM_SCAN(type, d_state (32), head_dim (1), n_head (32), n_group (1),
// n_seq_tokens (32), n_seqs (32), xbc_overlap (0), K (1)), as
// test_ssm_scan builds it: s [d_state, head_dim, n_head, n_seqs], x
// [head_dim, n_head, n_t, n_seqs], dt [n_head, n_t, n_seqs], A [d_state
// (1 when head_dim > 1), n_head] uniform in [-1, -0.5], B and C [d_state,
// n_group, n_t, n_seqs], ids i32 [n_seqs] a permutation; K is the number
// of state snapshots. xbc_overlap=1 makes x, B and C views of one
// [d_state, n_head, n_t, 2*n_seqs] buffer (x at offset nb3, B at 0, C at
// 2*nb3).
func buildSSMScan(b *csBuilder) {
	t := b.typ("type", ops.F32)
	dState := b.pos("d_state", 32)
	headDim := b.pos("head_dim", 1)
	nHead := b.pos("n_head", 32)
	nGroup := b.pos("n_group", 1)
	nTok := b.pos("n_seq_tokens", 32)
	nSeqs := b.pos("n_seqs", 32)
	overlap := b.bool("xbc_overlap")
	k := b.pos("K", 1)
	if b.err != nil {
		return
	}
	aRows := dState
	if headDim > 1 {
		aRows = 1
	}
	s := b.leaf("s", t, []int64{dState, headDim, nHead, nSeqs}, defaultRange)
	dt := b.leaf("dt", t, []int64{nHead, nTok, nSeqs}, defaultRange)
	a := b.leaf("A", t, []int64{aRows, nHead}, "uniform(-1, -0.5)")
	var x, bb, c string
	if overlap {
		full := []int64{dState, nHead, nTok, 2 * nSeqs}
		b.leaf("xbc", t, full, defaultRange)
		nb := contiguousNb(t, full)
		strides := [3]uint64{nb[1], nb[2], nb[3]}
		x = b.viewNode("x", "xbc", []int64{headDim, nHead, nTok, nSeqs}, strides, nb[3])
		bb = b.viewNode("B", "xbc", []int64{dState, nGroup, nTok, nSeqs}, strides, 0)
		c = b.viewNode("C", "xbc", []int64{dState, nGroup, nTok, nSeqs}, strides, 2*nb[3])
	} else {
		x = b.leaf("x", t, []int64{headDim, nHead, nTok, nSeqs}, defaultRange)
		bb = b.leaf("B", t, []int64{dState, nGroup, nTok, nSeqs}, defaultRange)
		c = b.leaf("C", t, []int64{dState, nGroup, nTok, nSeqs}, defaultRange)
	}
	ids := b.leaf("ids", ops.I32, []int64{nSeqs}, fmt.Sprintf("perm(%d)", nSeqs))
	b.node("out", ops.OpSSMScan, map[string]any{"K": k}, s, x, dt, a, bb, c, ids)
}

// RWKV_WKV6 and RWKV_WKV7(type, head_count (32), head_size (64),
// n_seq_tokens (32), n_seqs (32)): every per-token input is [head_size,
// head_count, n_seq_tokens·n_seqs], tf [head_size, head_count], the state
// [head_size²·head_count, n_seqs]. For WKV7, a and b go through l2_norm
// (eps 1e-7) first, as test_rwkv_wkv7 does.
func buildRWKV(b *csBuilder, op ops.Op) {
	t := b.typ("type", ops.F32)
	h := b.pos("head_count", 32)
	s := b.pos("head_size", 64)
	nTok := b.pos("n_seq_tokens", 32)
	nSeqs := b.pos("n_seqs", 32)
	if b.err != nil {
		return
	}
	tok := []int64{s, h, nTok * nSeqs}
	per := func(name string) string { return b.leaf(name, t, tok, defaultRange) }
	if op == ops.OpRWKVWKV6 {
		r, k, v := per("r"), per("k"), per("v")
		tf := b.leaf("tf", t, []int64{s, h}, defaultRange)
		td := per("td")
		st := b.leaf("state", t, []int64{s * s * h, nSeqs}, defaultRange)
		b.node("out", op, nil, k, v, r, tf, td, st)
		return
	}
	r, w, k, v, a, bb := per("r"), per("w"), per("k"), per("v"), per("a"), per("b")
	a = b.node("a_norm", ops.OpL2Norm, map[string]any{"eps": 1e-7}, a)
	bb = b.node("b_norm", ops.OpL2Norm, map[string]any{"eps": 1e-7}, bb)
	st := b.leaf("state", t, []int64{s * s * h, nSeqs}, defaultRange)
	b.node("out", op, nil, r, w, k, v, a, bb, st)
}

// GATED_DELTA_NET(type, head_count (4), head_size (16), n_seq_tokens (1),
// n_seqs (1), v_repeat (1), permuted (0), kda (0), K (1)): q and k
// [S, H, T, n_seqs] (built as [S, T, H, n_seqs] and permuted with axes
// (0, 2, 1, 3) when permuted=1), v [S, H·v_repeat, T, n_seqs], g [S if kda
// else 1, H·v_repeat, T, n_seqs] uniform(-20, -1e-4), beta [1, H·v_repeat,
// T, n_seqs] uniform(0, 1), state [S, S, H·v_repeat, n_seqs]; q and k go
// through l2_norm (eps 1e-6) first and v is uniform(-0.3, 5), as
// test_gated_delta_net does.
func buildGatedDeltaNet(b *csBuilder) {
	t := b.typ("type", ops.F32)
	h := b.pos("head_count", 4)
	s := b.pos("head_size", 16)
	nTok := b.pos("n_seq_tokens", 1)
	nSeqs := b.pos("n_seqs", 1)
	vr := b.pos("v_repeat", 1)
	permuted := b.bool("permuted")
	kda := b.bool("kda")
	slots := b.pos("K", 1)
	if b.err != nil {
		return
	}
	hv := h * vr
	qkv := func(name string, heads int64, init string) string {
		if !permuted {
			return b.leaf(name, t, []int64{s, heads, nTok, nSeqs}, init)
		}
		x := b.leaf(name, t, []int64{s, nTok, heads, nSeqs}, init)
		return b.node(name+"_perm", ops.OpPermute, map[string]any{"axes": []int64{0, 2, 1, 3}}, x)
	}
	q := qkv("q", h, defaultRange)
	k := qkv("k", h, defaultRange)
	v := qkv("v", hv, "uniform(-0.3, 5)")
	g0 := int64(1)
	if kda {
		g0 = s
	}
	g := b.leaf("g", t, []int64{g0, hv, nTok, nSeqs}, "uniform(-20, -0.0001)")
	beta := b.leaf("beta", t, []int64{1, hv, nTok, nSeqs}, "uniform(0, 1)")
	st := b.leaf("state", t, []int64{s, s, hv, nSeqs}, defaultRange)
	q = b.node("q_norm", ops.OpL2Norm, map[string]any{"eps": 1e-6}, q)
	k = b.node("k_norm", ops.OpL2Norm, map[string]any{"eps": 1e-6}, k)
	b.node("out", ops.OpGatedDeltaNet, map[string]any{"K": slots}, q, k, v, g, beta, st)
}

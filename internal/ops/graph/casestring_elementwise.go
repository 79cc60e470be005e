package graph

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the elementwise, reduction and index ops: the
// ones ggml-et dispatches (sqr, clamp, fill, diag, tri, at the end) and
// the ones it does not implement (registered through hostCaseBuilders).

// SQRT/LOG/SIN/COS(type, ne=[4]): test_sqrt, test_log, test_sin,
// test_cos, with their input ranges.
func buildMath(b *csBuilder, op ops.Op, def []int64, init string) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", def...)
	if b.err != nil {
		return
	}
	b.node("out", op, nil, b.leaf("a", t, ne, init))
}

// XIELU(type, ne=[4] (10,5,4,3)): test_xielu, ggml_xielu(a, 4, 20, 0.5,
// 1e-7) (the op's defaults).
func buildXielu(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpXielu, nil, b.leaf("a", t, ne, defaultRange))
}

// LEAKY_RELU(type, ne_a=[4] (10,5,4,3), negative_slope (0.1)):
// test_leaky_relu calls ggml_leaky_relu(..., inplace = true), so the node
// is in place.
func buildLeakyRelu(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 10, 5, 4, 3)
	slope := b.float("negative_slope", 0.1)
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	b.inplace = true
	b.node("out", ops.OpLeakyRelu, map[string]any{"negative_slope": slope}, x)
}

// SUM(type, ne=[4] (10,5,4,3), permute=[4]): test_sum; permute (printed
// only when not all zeros) permutes a first. Inputs uniform(-0.9, 1.1).
func buildSum(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	perm := b.permuteKey("permute")
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, "uniform(-0.9, 1.1)")
	if perm != nil {
		x = b.node("a_permuted", ops.OpPermute, map[string]any{"axes": perm}, x)
	}
	b.node("out", ops.OpSum, nil, x)
}

// DUP(type, ne=[4] (10,10,20,1), permute=[4]): test_dup.
func buildDup(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 20, 1)
	perm := b.permuteKey("permute")
	if b.err != nil {
		return
	}
	x := b.leaf("src", t, ne, defaultRange)
	if perm != nil {
		x = b.node("src_permuted", ops.OpPermute, map[string]any{"axes": perm}, x)
	}
	b.node("out", ops.OpDup, nil, x)
}

// distinctRows is the init of test_argmax and friends: each f32 row a
// shuffle of 0..ne0-1 (no ties); other types get uniform(-1, 1).
func distinctRows(t ops.Type, ne0 int64) string {
	if t == ops.F32 {
		return fmt.Sprintf("perm(%d)", ne0)
	}
	return defaultRange
}

// ARGMAX(type, ne=[4] (10,100,1,1)): test_argmax.
func buildArgmax(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 100, 1, 1)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpArgmax, nil, b.leaf("a", t, ne, distinctRows(t, ne[0])))
}

// COUNT_EQUAL(type, ne=[4] (4,500,1,1)): test_count_equal, the count of
// equal argmax of two tensors.
func buildCountEqual(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 4, 500, 1, 1)
	if b.err != nil {
		return
	}
	a := b.node("a_argmax", ops.OpArgmax, nil, b.leaf("a", t, ne, distinctRows(t, ne[0])))
	c := b.node("b_argmax", ops.OpArgmax, nil, b.leaf("b", t, ne, distinctRows(t, ne[0])))
	b.node("out", ops.OpCountEqual, nil, a, c)
}

// ARGSORT(type, ne=[4] (16,10,10,10), order (0 asc, 1 desc)):
// test_argsort.
func buildArgsort(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 16, 10, 10, 10)
	order := b.nameValue("order", "asc", ops.SortOrders)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpArgsort, map[string]any{"order": order}, b.leaf("a", t, ne, distinctRows(t, ne[0])))
}

// TOP_K(type, ne=[4] (16,10,10,10), k (4), ties): test_top_k. Without
// ties each row is a shuffle of 0..ne0-1; with ties test_top_k draws
// shuffled i/d (d = clamp(k/2, 1, 10)), which et's inits cannot express:
// et draws integers in [0, (ne0-1)/d] instead, the same values with
// random multiplicities.
func buildTopK(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 16, 10, 10, 10)
	k := b.pos("k", 4)
	ties := b.bool("ties")
	if b.err != nil {
		return
	}
	init := distinctRows(t, ne[0])
	if ties {
		d := max(1, min(10, k/2))
		init = fmt.Sprintf("randint(0, %d)", (ne[0]-1)/d+1)
	}
	b.node("out", ops.OpTopK, map[string]any{"k": k}, b.leaf("a", t, ne, init))
}

// ACC(type, ne_a=[4] (256,17,2,3), ne_b=[4] (256,16,2,3), stride_dim
// (-1)): test_acc, ggml_acc(a, b, a->nb[1], a->nb[2], a->nb[3], 0). With
// stride_dim 1 to 3, b is a view of a b_pad one larger in that dim, at
// offset b_pad->nb[1].
func buildAcc(b *csBuilder) {
	t := b.typ("type", ops.F32)
	neA := b.shape("ne_a", 256, 17, 2, 3)
	neB := b.shape("ne_b", 256, 16, 2, 3)
	sd := b.int("stride_dim", -1)
	if b.err != nil {
		return
	}
	a := b.leaf("a", t, neA, defaultRange)
	var x string
	if sd >= 1 && sd <= 3 {
		pad := append([]int64(nil), neB...)
		pad[sd]++
		bp := b.leaf("b_pad", t, pad, defaultRange)
		nb := contiguousNb(t, pad)
		x = b.viewNode("b", bp, neB, [3]uint64{nb[1], nb[2], nb[3]}, nb[1])
	} else {
		x = b.leaf("b", t, neB, defaultRange)
	}
	nbA := contiguousNb(t, neA)
	b.node("out", ops.OpAcc, map[string]any{"nb1": int64(nbA[1]), "nb2": int64(nbA[2]), "nb3": int64(nbA[3]), "offset": int64(0)}, a, x)
}

// ADD_ID(type_a, type_b, n_embd (128), n_experts (16), n_experts_used
// (8), n_token (10)): test_add_id. ids rows are shuffles of the experts,
// viewed as their first n_experts_used columns.
func buildAddID(b *csBuilder) {
	ta := b.typ("type_a", ops.F32)
	tb := b.typ("type_b", ops.F32)
	nEmbd := b.pos("n_embd", 128)
	nExp := b.pos("n_experts", 16)
	nUsed := b.pos("n_experts_used", 8)
	nTok := b.pos("n_token", 10)
	if b.err != nil {
		return
	}
	if nUsed > nExp {
		b.fail("n_experts_used = %d is more than n_experts = %d", nUsed, nExp)
		return
	}
	a := b.leaf("a", ta, []int64{nEmbd, nUsed, nTok}, defaultRange)
	bb := b.leaf("b", tb, []int64{nEmbd, nExp}, defaultRange)
	ids := b.leaf("ids", ops.I32, []int64{nExp, nTok}, fmt.Sprintf("perm(%d)", nExp))
	if nUsed != nExp {
		nb := contiguousNb(ops.I32, []int64{nExp, nTok})
		ids = b.viewNode("view_of_ids", ids, []int64{nUsed, nTok}, [3]uint64{nb[1], nb[2], nb[3]}, 0)
	}
	b.node("out", ops.OpAddID, nil, a, bb, ids)
}

// ARANGE(type, start (0), stop (10), step (1)): test_arange; the node has
// no source.
func buildArange(b *csBuilder) {
	if t := b.typ("type", ops.F32); t != ops.F32 && b.err == nil {
		b.fail("type: ggml_arange makes f32, got %s", t)
	}
	start := b.float("start", 0)
	stop := b.float("stop", 10)
	step := b.float("step", 1)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpArange, map[string]any{"start": start, "stop": stop, "step": step})
}

// DIAG_MASK_INF(type, ne=[4] (10,10,3,2), n_past (5)): test_diag_mask_inf.
func buildDiagMaskInf(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 3, 2)
	nPast := b.int("n_past", 5)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpDiagMaskInf, map[string]any{"n_past": nPast}, b.leaf("a", t, ne, defaultRange))
}

// TIMESTEP_EMBEDDING(type, ne_a=[4] (2,1,1,1), dim (320), max_period
// (10000)): test_timestep_embedding.
func buildTimestepEmbedding(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 2, 1, 1, 1)
	dim := b.pos("dim", 320)
	mp := b.pos("max_period", 10000)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpTimestepEmbedding, map[string]any{"dim": dim, "max_period": mp}, b.leaf("a", t, ne, defaultRange))
}

// PAD_REFLECT_1D(type, ne_a=[4] (512,34,2,1), pad_0 (10), pad_1 (9)):
// test_pad_reflect_1d; a is 2-D [ne_a0, ne_a1] (ne_a2, ne_a3 are printed
// but unused, as in the test).
func buildPadReflect1D(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 512, 34, 2, 1)
	p0 := b.int("pad_0", 10)
	p1 := b.int("pad_1", 9)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpPadReflect1D, map[string]any{"p0": p0, "p1": p1}, b.leaf("a", t, ne[:2], defaultRange))
}

// ROLL(shift0 (3), shift1 (-2), shift3 (1), shift4 (-1), permute):
// test_roll on an f32 [10,5,4,3] (permuted (0,2,1,3) with permute=1); the
// four shifts are those of dims 0 to 3.
func buildRoll(b *csBuilder) {
	s := []int64{b.int("shift0", 3), b.int("shift1", -2), b.int("shift3", 1), b.int("shift4", -1)}
	perm := b.bool("permute")
	if b.err != nil {
		return
	}
	x := b.leaf("a", ops.F32, []int64{10, 5, 4, 3}, defaultRange)
	if perm {
		x = b.node("a_permuted", ops.OpPermute, map[string]any{"axes": []int64{0, 2, 1, 3}}, x)
	}
	b.node("out", ops.OpRoll, map[string]any{"shift": s}, x)
}

// OUT_PROD(type_a, type_b, m (32), n (32), k (32), bs=[2], nr=[2],
// trans_b): test_out_prod. a is [m, k, bs0, bs1]; b is [n, k, bs0·nr0,
// bs1·nr1], or with trans_b the transpose of a [k, n, ...] tensor.
func buildOutProd(b *csBuilder) {
	ta := b.typ("type_a", ops.F32)
	tb := b.typ("type_b", ops.F32)
	m := b.pos("m", 32)
	n := b.pos("n", 32)
	k := b.pos("k", 32)
	bs := b.shape("bs", 1, 1)
	nr := b.shape("nr", 1, 1)
	trans := b.bool("trans_b")
	if b.err != nil {
		return
	}
	a := b.leaf("a", ta, []int64{m, k, bs[0], bs[1]}, defaultRange)
	var x string
	if trans {
		x = b.node("b_t", ops.OpTranspose, nil, b.leaf("b", tb, []int64{k, n, bs[0] * nr[0], bs[1] * nr[1]}, defaultRange))
	} else {
		x = b.leaf("b", tb, []int64{n, k, bs[0] * nr[0], bs[1] * nr[1]}, defaultRange)
	}
	b.node("out", ops.OpOutProd, nil, a, x)
}

// SQR(type, ne=[4] (10,5,4,3)).
func buildSqr(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpSqr, nil, b.leaf("a", t, ne, defaultRange))
}

// CLAMP(type, ne=[4] (10,5,4,3), min (-0.5), max (0.5)).
func buildClamp(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	lo := b.float("min", -0.5)
	hi := b.float("max", 0.5)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpClamp, map[string]any{"min": lo, "max": hi}, b.leaf("a", t, ne, defaultRange))
}

// FILL(type, ne=[4] (10,10,4,3), c): test_fill has no default for c; et
// uses 0.
func buildFill(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 4, 3)
	c := b.float("c", 0)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpFill, map[string]any{"c": c}, b.leaf("a", t, ne, defaultRange))
}

// DIAG(type, ne=[4] (10,1,4,3)): a must be [N, 1, ...].
func buildDiag(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 1, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpDiag, nil, b.leaf("a", t, ne, defaultRange))
}

// triTypes are ggml_tri_type's values (ggml d99724f, as in the ABI
// manifest) and the catalog's names for them.
var triTypes = map[int64]string{0: "upper_diag", 1: "upper", 2: "lower_diag", 3: "lower"}

// TRI(type, ne=[4] (10,10,4,3), tri_type): tri_type is ggml_tri_type as
// an integer (0 upper_diag, 1 upper, 2 lower_diag, 3 lower) or its name.
// test_tri has no default; et uses 3 (lower).
func buildTri(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 4, 3)
	tt := b.enumKey("tri_type", "lower", triTypes)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpTri, map[string]any{"type": tt}, b.leaf("a", t, ne, defaultRange))
}

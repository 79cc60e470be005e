package graph

import (
	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the reductions ggml-et dispatches (sum_rows, mean, cumsum, l2_norm, group_norm).
// Keys, defaults and graphs follow the test-backend-ops test class of
// the same name (test_<op>, ggml d99724f2); where it gives no usable
// default, the choice is et's and the comment says so.

// SUM_ROWS(type, ne=[4] (10,5,4,3), permute, slice): slice views a as
// [ne0, ne1, ne2/2, ne3-1] with strides (nb1, 2·nb2, nb3) at offset nb3;
// permute then permutes it with axes (0, 2, 3, 1), as test_sum_rows does.
func buildSumRows(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	perm := b.bool("permute")
	slice := b.bool("slice")
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	if slice {
		if ne[2] < 2 || ne[3] < 2 {
			b.fail("slice=1 needs ne2 >= 2 and ne3 >= 2 (the slice is [ne0, ne1, ne2/2, ne3-1])")
			return
		}
		nb := contiguousNb(t, ne)
		x = b.viewNode("a_slice", x, []int64{ne[0], ne[1], ne[2] / 2, ne[3] - 1}, [3]uint64{nb[1], 2 * nb[2], nb[3]}, nb[3])
	}
	if perm {
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": []int64{0, 2, 3, 1}}, x)
	}
	b.node("out", ops.OpSumRows, nil, x)
}

// MEAN(type, ne=[4] (10,5,4,3)); inputs uniform(-0.9, 1.1) as test_mean
// uses (off-centre, to avoid cancellation).
func buildMean(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpMean, nil, b.leaf("a", t, ne, "uniform(-0.9, 1.1)"))
}

// CUMSUM(type, ne=[4] (10,5,4,3)).
func buildCumsum(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpCumsum, nil, b.leaf("a", t, ne, defaultRange))
}

// L2_NORM(type, ne=[4] (64,64,320,1), eps (1e-12), v, noncontig_rows):
// as test_l2_norm builds it, noncontig_rows builds a as [ne1, ne0, ne2,
// ne3] and permutes dims 0 and 1 back; v then views half of a in each dim
// with a's strides (buildNorm's input).
func buildL2Norm(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 64, 320, 1)
	eps := b.float("eps", 1e-12)
	v := b.bool("v")
	nc := b.bool("noncontig_rows")
	if b.err != nil {
		return
	}
	b.node("out", ops.OpL2Norm, map[string]any{"eps": eps}, b.normInput(t, ne, nc, v))
}

// GROUP_NORM(type, ne=[4] (64,64,320,1), num_groups (32), eps (1e-6)).
func buildGroupNorm(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 64, 320, 1)
	g := b.int("num_groups", 32)
	eps := b.float("eps", 1e-6)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpGroupNorm, map[string]any{"n_groups": g, "eps": eps}, b.leaf("a", t, ne, defaultRange))
}

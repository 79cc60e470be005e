package graph

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the matrix ops ggml-et dispatches beside mul_mat (mul_mat_id, solve_tri).
// Keys, defaults and graphs follow the test-backend-ops test class of
// the same name (test_<op>, ggml d99724f2); where it gives no usable
// default, the choice is et's and the comment says so.

// MUL_MAT_ID(type_a (f32), type_b (f32), n_mats (8), n_used (2), b (0),
// m (32), n (32), k (32)): as [k, m, n_mats]; ids i32 [n_mats, n], each
// row a permutation of the experts, viewed as its first n_used columns
// when n_used < n_mats; b [k, n_used (1 with b=1), n].
func buildMulMatID(b *csBuilder) {
	ta := b.typ("type_a", ops.F32)
	tb := b.typ("type_b", ops.F32)
	nMats := b.pos("n_mats", 8)
	nUsed := b.pos("n_used", 2)
	bcast := b.bool("b")
	m := b.pos("m", 32)
	n := b.pos("n", 32)
	k := b.pos("k", 32)
	if b.err != nil {
		return
	}
	if nUsed > nMats {
		b.fail("n_used = %d is more than n_mats = %d", nUsed, nMats)
		return
	}
	as := b.leaf("as", ta, []int64{k, m, nMats}, defaultRange)
	ids := b.leaf("ids", ops.I32, []int64{nMats, n}, fmt.Sprintf("perm(%d)", nMats))
	if nUsed != nMats {
		nb := contiguousNb(ops.I32, []int64{nMats, n})
		ids = b.viewNode("ids_view", ids, []int64{nUsed, n}, [3]uint64{nb[1], nb[2], nb[3]}, 0)
	}
	rows := nUsed
	if bcast {
		rows = 1
	}
	x := b.leaf("b", tb, []int64{k, rows, n}, defaultRange)
	b.node("out", ops.OpMulMatID, nil, as, x, ids)
}

// SOLVE_TRI(type, ne_lhs=[4] (10,10,4,3), ne_rhs=[4] (3,10,4,3)): a is
// uniform(0.1, 1) (test_solve_tri fills its lower triangle so; only the
// lower triangle is read), b uniform(-1, 1).
func buildSolveTri(b *csBuilder) {
	t := b.typ("type", ops.F32)
	nl := b.shape("ne_lhs", 10, 10, 4, 3)
	nr := b.shape("ne_rhs", 3, 10, 4, 3)
	if b.err != nil {
		return
	}
	a := b.leaf("a", t, nl, "uniform(0.1, 1)")
	bb := b.leaf("b", t, nr, defaultRange)
	b.node("out", ops.OpSolveTri, nil, a, bb)
}

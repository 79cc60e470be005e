package graph

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders for the ggml-et ops outside the llama decoder set.
// Keys, defaults and graphs follow the test-backend-ops test classes of
// the same name (test_sqr, test_sum_rows, test_mean, test_clamp,
// test_cumsum, test_mul_mat_id, test_l2_norm, test_group_norm,
// test_im2col, test_conv_2d, test_concat, test_repeat, test_pad and
// test_pad_ext, test_fill, test_diag, test_tri, test_solve_tri, test_set,
// test_ssm_conv, test_ssm_scan, test_rwkv_wkv6, test_rwkv_wkv7,
// test_gated_delta_net), as read from a llama.cpp test-backend-ops.cpp
// newer than ggml d99724f. Where that file gives no usable default (a
// constructor argument without a default, or defaults that contradict
// each other) the choice is et's and the comment says so.

// contiguousNb is the byte strides of a contiguous tensor of type t and
// shape ne (1 to 4 dims).
func contiguousNb(t ops.Type, ne []int64) [ops.MaxDims]uint64 {
	var full [ops.MaxDims]int64
	for i := range full {
		full[i] = 1
	}
	copy(full[:], ne)
	return ops.ContiguousStrides(t, full)
}

// viewNode adds a view node of shape ne with byte strides nb1..nb3 and a
// byte offset over x: ggml_view_4d(x, ne..., nb1, nb2, nb3, offset).
func (b *csBuilder) viewNode(name, x string, ne []int64, nb [3]uint64, off uint64) string {
	ne4 := []int64{1, 1, 1, 1}
	copy(ne4, ne)
	return b.node(name, ops.OpView, map[string]any{
		"ne":     ne4,
		"nb":     []int64{int64(nb[0]), int64(nb[1]), int64(nb[2])},
		"offset": int64(off),
	}, x)
}

// boolDef reads a 0/1 key whose default is def.
func (b *csBuilder) boolDef(key string, def bool) bool {
	if _, ok := b.kv[key]; !ok {
		b.get(key)
		return def
	}
	return b.bool(key)
}

// enumKey reads an enum key given either as ggml's integer value
// (test-backend-ops prints enums as integers) or as its name.
func (b *csBuilder) enumKey(key string, def string, values map[int64]string) string {
	v, ok := b.get(key)
	if !ok {
		return def
	}
	var n int64
	if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v {
		if name, ok := values[n]; ok {
			return name
		}
	}
	for _, name := range values {
		if strings.EqualFold(v, name) {
			return name
		}
	}
	var want []string
	for i := int64(0); i < int64(len(values)); i++ {
		want = append(want, fmt.Sprintf("%d %s", i, values[i]))
	}
	b.fail("%s: unknown value %q (want %s)", key, v, strings.Join(want, ", "))
	return def
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

// CUMSUM(type, ne=[4] (10,5,4,3)).
func buildCumsum(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpCumsum, nil, b.leaf("a", t, ne, defaultRange))
}

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

// IM2COL(type_input (f32), type_kernel (f16), dst_type (f32), ne_input=[4]
// (10,10,3,1), ne_kernel=[4] (3,3,3,1), s0, s1 (1), p0, p1 (1), d0, d1
// (1), is_2D (1)): the kernel tensor only gives the patch shape.
func buildIm2col(b *csBuilder) {
	ti := b.typ("type_input", ops.F32)
	tk := b.typ("type_kernel", ops.F16)
	td := b.typ("dst_type", ops.F32)
	neIn := b.shape("ne_input", 10, 10, 3, 1)
	neK := b.shape("ne_kernel", 3, 3, 3, 1)
	params := map[string]any{}
	for _, k := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
		params[k] = b.int(k, 1)
	}
	params["is_2d"] = b.boolDef("is_2D", true)
	if b.err != nil {
		return
	}
	params["dst_type"] = td.String()
	kernel := b.leaf("kernel", tk, neK, defaultRange)
	input := b.leaf("input", ti, neIn, defaultRange)
	b.node("out", ops.OpIm2col, params, kernel, input)
}

// CONV_2D(ne_input=[4] (64,64,16,1), ne_kernel=[4], type_kernel (f32),
// stride0, stride1 (1), padding0, padding1 (0), dilation0, dilation1 (1),
// cwhn (0)): kernel [KW, KH, Cin, Cout] * input [W, H, Cin, N].
// test_conv_2d's default ne_kernel (3,3,1,16) does not match its default
// input's 16 channels, so et's default is [3, 3, ne_input2, 16]. cwhn=1
// stores input and kernel channel-innermost, as test_conv_2d does: input =
// permute(cont(permute(input, 1, 2, 0, 3)), 2, 0, 1, 3) and kernel =
// permute(cont(permute(kernel, 2, 3, 1, 0)), 3, 2, 0, 1), so conv_2d sees
// the WHCN shapes with permuted strides.
func buildConv2D(b *csBuilder) {
	neIn := b.shape("ne_input", 64, 64, 16, 1)
	if b.err != nil {
		return
	}
	neK := b.shape("ne_kernel", 3, 3, neIn[2], 16)
	tk := b.typ("type_kernel", ops.F32)
	params := map[string]any{
		"s0": b.int("stride0", 1), "s1": b.int("stride1", 1),
		"p0": b.int("padding0", 0), "p1": b.int("padding1", 0),
		"d0": b.int("dilation0", 1), "d1": b.int("dilation1", 1),
	}
	cwhn := b.bool("cwhn")
	if b.err != nil {
		return
	}
	kernel := b.leaf("kernel", tk, neK, defaultRange)
	input := b.leaf("input", ops.F32, neIn, defaultRange)
	if cwhn {
		perm := func(x, name string, axes ...int64) string {
			return b.node(name, ops.OpPermute, map[string]any{"axes": axes}, x)
		}
		input = perm(b.node("input_cwhn", ops.OpCont, nil, perm(input, "input_p", 1, 2, 0, 3)), "input_whcn", 2, 0, 1, 3)
		kernel = perm(b.node("kernel_cwhn", ops.OpCont, nil, perm(kernel, "kernel_p", 2, 3, 1, 0)), "kernel_whcn", 3, 2, 0, 1)
	}
	b.node("out", ops.OpConv2D, params, kernel, input)
}

// CONCAT(type, ne_a=[4] (10,5,5,5), ne_b_d (5), dim (2), v (0)): b is
// ne_a with ne_b_d in dimension dim; as test_concat does, v bit 0 views a
// out of a [2·ne0, 4·ne1, 3·ne2, ne3] tensor (else bit 2 out of [ne0,
// ne1, 2·ne2, 4·ne3]), bit 1 views b out of [3·ne0, 2·ne1, 4·ne2, ne3]
// (else bit 3 out of [ne0, ne1, 3·ne2, 2·ne3]).
func buildConcat(b *csBuilder) {
	t := b.typ("type", ops.F32)
	neA := b.shape("ne_a", 10, 5, 5, 5)
	nbd := b.pos("ne_b_d", 5)
	dim := b.int("dim", 2)
	v := b.int("v", 0)
	if b.err != nil {
		return
	}
	if dim < 0 || dim > 3 {
		b.fail("dim = %d, want 0 to 3", dim)
		return
	}
	if v < 0 || v > 15 {
		b.fail("v = %d, want 0 to 15 (bits 0 and 2: view a, bits 1 and 3: view b)", v)
		return
	}
	neB := append([]int64(nil), neA...)
	neB[dim] = nbd
	input := func(name string, ne []int64, f *[4]int64) string {
		if f == nil {
			return b.leaf(name, t, ne, defaultRange)
		}
		full := []int64{ne[0] * f[0], ne[1] * f[1], ne[2] * f[2], ne[3] * f[3]}
		b.leaf(name, t, full, defaultRange)
		return b.viewOf(name, t, full, ne)
	}
	pick := func(first, second int64, f1, f2 [4]int64) *[4]int64 {
		switch {
		case v&first != 0:
			return &f1
		case v&second != 0:
			return &f2
		}
		return nil
	}
	a := input("a", neA, pick(1, 4, [4]int64{2, 4, 3, 1}, [4]int64{1, 1, 2, 4}))
	bb := input("b", neB, pick(2, 8, [4]int64{3, 2, 4, 1}, [4]int64{1, 1, 3, 2}))
	b.node("out", ops.OpConcat, map[string]any{"dim": dim}, a, bb)
}

// REPEAT(type, ne=[4] (10,5,4,3), nr=[4] (2,2,2,2)): a of shape ne tiled
// to ne·nr.
func buildRepeat(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	nr := b.shape("nr", 2, 2, 2, 2)
	if b.err != nil {
		return
	}
	target := make([]int64, 4)
	for i := range target {
		target[i] = ne[i] * nr[i]
	}
	b.node("out", ops.OpRepeat, map[string]any{"ne": target}, b.leaf("a", t, ne, defaultRange))
}

// padExtKeys are test_pad_ext's padding keys, in op_params order.
var padExtKeys = []string{"lp0", "rp0", "lp1", "rp1", "lp2", "rp2", "lp3", "rp3"}

// PAD is two test classes. test_pad: PAD(type, ne_a=[4] (512,512,1,1),
// pad_0 (1), pad_1 (1), circular (0)) pads pad_0 and pad_1 zeros at the
// end of dims 0 and 1. test_pad_ext (chosen when any of lp0..rp3 or tfrm
// is given): PAD(type, ne_a=[4] (512,512,3,1), lp0, rp0, ..., lp3, rp3
// (1 each), tfrm (0), circular (0)) pads before (lp) and after (rp) each
// dim; tfrm 1 views a as ((ne+1)/2) in each dim, tfrm 2 permutes it with
// axes (2, 1, 0, 3). circular=1 wraps around instead of padding zeros
// (ggml_pad_circular, ggml_pad_ext_circular).
func buildPad(b *csBuilder) {
	ext := false
	for _, k := range append([]string{"tfrm"}, padExtKeys...) {
		if _, ok := b.kv[k]; ok {
			ext = true
		}
	}
	t := b.typ("type", ops.F32)
	circular := b.bool("circular")
	lp := []int64{0, 0, 0, 0}
	rp := []int64{0, 0, 0, 0}
	var ne []int64
	tfrm := int64(0)
	if ext {
		ne = b.shape("ne_a", 512, 512, 3, 1)
		for i, k := range padExtKeys {
			v := b.int(k, 1)
			if v < 0 {
				b.fail("%s: want a non-negative padding, got %d", k, v)
			}
			if i%2 == 0 {
				lp[i/2] = v
			} else {
				rp[i/2] = v
			}
		}
		tfrm = b.int("tfrm", 0)
		for _, k := range []string{"pad_0", "pad_1"} {
			if _, ok := b.kv[k]; ok {
				b.fail("%s (test_pad) cannot be mixed with lp0..rp3 and tfrm (test_pad_ext)", k)
			}
		}
	} else {
		ne = b.shape("ne_a", 512, 512, 1, 1)
		rp[0] = b.int("pad_0", 1)
		rp[1] = b.int("pad_1", 1)
		if rp[0] < 0 || rp[1] < 0 {
			b.fail("pad_0 and pad_1 must not be negative")
		}
	}
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	switch tfrm {
	case 0:
	case 1:
		half := make([]int64, 4)
		for i := range half {
			half[i] = (ne[i] + 1) / 2
		}
		x = b.viewOf(x, t, ne, half)
	case 2:
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": []int64{2, 1, 0, 3}}, x)
	default:
		b.fail("tfrm = %d, want 0 (none), 1 (view) or 2 (permute)", tfrm)
		return
	}
	b.node("out", ops.OpPad, map[string]any{"lp": lp, "rp": rp, "circular": circular}, x)
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

// SET(type_src (f32), type_dst (f32), ne=[4] (6,5,4,3), dim (1), inplace
// (0)): dst is ne with dims below dim doubled; src (ne) is written at the
// centre of those dims with src's own contiguous strides, as test_set
// does. inplace selects ggml_set_inplace, the only form ggml-et runs.
func buildSet(b *csBuilder) {
	ts := b.typ("type_src", ops.F32)
	td := b.typ("type_dst", ops.F32)
	ne := b.shape("ne", 6, 5, 4, 3)
	dim := b.int("dim", 1)
	inplace := b.bool("inplace")
	if b.err != nil {
		return
	}
	if dim < 0 || dim > 4 {
		b.fail("dim = %d, want 0 to 4", dim)
		return
	}
	neDst := append([]int64(nil), ne...)
	for i := int64(0); i < dim; i++ {
		neDst[i] *= 2
	}
	nbDst := contiguousNb(td, neDst)
	off := uint64(0)
	for i := int64(0); i < dim; i++ {
		off += uint64((neDst[i]-ne[i])/2) * nbDst[i]
	}
	nbSrc := contiguousNb(ts, ne)
	dst := b.leaf("dst", td, neDst, defaultRange)
	src := b.leaf("src", ts, ne, defaultRange)
	b.node("out", ops.OpSet, map[string]any{
		"nb1": int64(nbSrc[1]), "nb2": int64(nbSrc[2]), "nb3": int64(nbSrc[3]),
		"offset": int64(off), "inplace": inplace,
	}, dst, src)
}

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

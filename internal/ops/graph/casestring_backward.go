package graph

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of ggml's backward (training) ops, which ggml-et
// does not implement (registered through hostCaseBuilders).

// SILU_BACK(type, ne=[4] (64,5,4,3), eps): test_silu_back,
// ggml_silu_back(a, grad): a is the incoming gradient (src0) and grad the
// forward input (src1), as ggml names them. eps is printed but unused.
func buildSiluBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 5, 4, 3)
	b.float("eps", 1e-6)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpSiluBack, nil, b.leaf("a", t, ne, defaultRange), b.leaf("grad", t, ne, defaultRange))
}

// RMS_NORM_BACK(type, ne=[4] (64,5,4,3), eps (1e-6)): test_rms_norm_back,
// inputs uniform(-10, 10).
func buildRMSNormBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 5, 4, 3)
	eps := b.float("eps", 1e-6)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpRMSNormBack, map[string]any{"eps": eps},
		b.leaf("a", t, ne, "uniform(-10, 10)"), b.leaf("b", t, ne, "uniform(-10, 10)"))
}

// SOFT_MAX_BACK(type, ne=[4] (10,5,4,3), scale (1), max_bias (0)):
// test_soft_max_back.
func buildSoftMaxBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	scale := b.float("scale", 1)
	maxBias := b.float("max_bias", 0)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpSoftMaxBack, map[string]any{"scale": scale, "max_bias": maxBias},
		b.leaf("a", t, ne, defaultRange), b.leaf("b", t, ne, defaultRange))
}

// REPEAT_BACK(type, ne=[4] (8,6,4,2), nr=[4], v): test_repeat_back. src
// is ne·nr; v views it as half its size in every repeated dim. The
// target tensor of ggml_repeat_back only gives the result's shape (it is
// not a source), so it is the node's ne parameter.
func buildRepeatBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 8, 6, 4, 2)
	nr := b.shape("nr", 1, 1, 1, 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	full := make([]int64, 4)
	for i := range full {
		full[i] = ne[i] * nr[i]
	}
	x := b.leaf("src", t, full, defaultRange)
	if v {
		half := make([]int64, 4)
		for i := range half {
			if ne[i]%2 != 0 || (nr[i] != 1 && nr[i]%2 != 0) {
				b.fail("v=1 needs even ne and nr of 1 or even (test_repeat_back asserts it)")
				return
			}
			half[i] = full[i]
			if nr[i] != 1 {
				half[i] = full[i] / 2
			}
		}
		x = b.viewOf(x, t, full, half)
	}
	b.node("out", ops.OpRepeatBack, map[string]any{"ne": ne}, x)
}

// GET_ROWS_BACK(type, n (10), m (5), r (3), b (1), v): test_get_rows_back,
// ggml_get_rows_back(grad [n, r, b], rows i32 [r, b] in [0, m), in_forward
// [n, m, b]); in_forward only gives the result's shape [n, m], the ne
// parameter. v takes an [r/2, b] view of the rows.
func buildGetRowsBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	n := b.pos("n", 10)
	m := b.pos("m", 5)
	r := b.pos("r", 3)
	bb := b.pos("b", 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	rows := b.leaf("rows", ops.I32, []int64{r, bb}, fmt.Sprintf("randint(0, %d)", m))
	if v {
		if r < 2 {
			b.fail("v=1 needs r >= 2")
			return
		}
		rows = b.viewOf(rows, ops.I32, []int64{r, bb}, []int64{r / 2, bb})
	}
	grad := b.leaf("grad", t, []int64{n, r, bb}, defaultRange)
	b.node("out", ops.OpGetRowsBack, map[string]any{"ne": []int64{n, m}}, grad, rows)
}

// ROPE_BACK(type, ne_a=[4], n_dims, mode, n_ctx, fs, ef, af, ff, v,
// inplace, n_offs): test_rope with forward = false: ggml_rope_ext_back
// (ggml_rope_multi_back for mrope modes: sections [n/3, n/3, n/3, 0], or
// for vision n_dims/2 rotated dims and sections [n/4, n/4, 0, 0]), with
// n_ctx_orig 0, freq_base 10000, beta_fast 1 and beta_slow 1 as the test
// passes them. v=1 views a out of a [2·ne0, 4·ne1, 3·ne2, ne3] tensor,
// v=2 takes the second half of a [2·ne0, ...] tensor along dim 0.
// positions are i32 [ne2] (4·ne2 for mrope and vision) in [0, n_ctx);
// ff adds freq_factors [n_dims/2] in [0.9, 1.1]. inplace has no effect on
// the backward op (test_rope ignores it there).
func buildRopeBack(b *csBuilder) { buildRopeOp(b, ops.OpRopeBack) }

// CROSS_ENTROPY_LOSS(type, ne=[4] (10,5,4,3)): test_cross_entropy_loss:
// the labels go through soft_max first; inputs uniform(-100, 100).
func buildCrossEntropyLoss(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	logits := b.leaf("logits", t, ne, "uniform(-100, 100)")
	labels := b.node("labels_normalized", ops.OpSoftMax, nil, b.leaf("labels", t, ne, "uniform(-100, 100)"))
	b.node("out", ops.OpCrossEntropyLoss, nil, logits, labels)
}

// CROSS_ENTROPY_LOSS_BACK(type, ne=[4] (10,5,4,3)):
// test_cross_entropy_loss_back: grad f32 [1], logits, soft_max(labels).
func buildCrossEntropyLossBack(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	grad := b.leaf("grad", ops.F32, []int64{1}, defaultRange)
	logits := b.leaf("logits", t, ne, defaultRange)
	labels := b.node("labels_normalized", ops.OpSoftMax, nil, b.leaf("labels", t, ne, defaultRange))
	b.node("out", ops.OpCrossEntropyLossBack, nil, grad, logits, labels)
}

// OPT_STEP_ADAMW(type, ne=[4] (10,5,4,3)): test_opt_step_adamw; the
// result is a view of a (ggml_view_tensor), so the node is in place.
// Inputs uniform(0, 1).
func buildOptStepAdamW(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	src := []string{b.leaf("a", t, ne, "uniform(0, 1)"), b.leaf("grad", t, ne, "uniform(0, 1)"),
		b.leaf("grad_m", t, ne, "uniform(0, 1)"), b.leaf("grad_v", t, ne, "uniform(0, 1)"),
		b.leaf("adamw_params", ops.F32, []int64{7}, "uniform(0, 1)")}
	b.inplace = true
	b.node("out", ops.OpOptStepAdamW, nil, src...)
}

// OPT_STEP_SGD(type, ne=[4] (10,5,4,3)): test_opt_step_sgd, in place as
// OPT_STEP_ADAMW.
func buildOptStepSGD(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	if b.err != nil {
		return
	}
	src := []string{b.leaf("a", t, ne, "uniform(0, 1)"), b.leaf("grad", t, ne, "uniform(0, 1)"),
		b.leaf("sgd_params", ops.F32, []int64{2}, "uniform(0, 1)")}
	b.inplace = true
	b.node("out", ops.OpOptStepSGD, nil, src...)
}

package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// The rows of the other ops ggml-et dispatches (reference §1.2). They are
// keyed by op name so that they apply as soon as the catalog has the op.

// ggmlETOps lists every op ggml_backend_et_graph_compute dispatches (the
// 39 ops of its switch, reference §2.2), by case-file name. An op in this
// list without a rules row is one et does not model yet; any other op is
// one ggml-et does not implement.
var ggmlETOps = map[ops.Op]bool{
	"add": true, "sub": true, "mul": true, "sqr": true, "sum_rows": true, "cumsum": true, "mean": true,
	"repeat": true, "concat": true, "norm": true, "rms_norm": true, "group_norm": true, "l2_norm": true,
	"mul_mat": true, "mul_mat_id": true, "scale": true, "set": true, "cpy": true, "cont": true,
	"get_rows": true, "set_rows": true, "diag": true, "soft_max": true, "rope": true, "clamp": true,
	"im2col": true, "conv_2d": true, "pad": true, "tri": true, "fill": true, "flash_attn_ext": true,
	"ssm_conv": true, "ssm_scan": true, "rwkv_wkv6": true, "rwkv_wkv7": true, "solve_tri": true,
	"gated_delta_net": true, "unary": true, "glu": true,
}

// moreRules are the rows of the ops outside the llama decoder set.
var moreRules = map[ops.Op]opRule{
	"sqr":        {check: checkSqr, kernel: fixed("sqr_f32"), fields: []string{"src0"}},
	"sum_rows":   {check: checkSumRows, kernel: fixed("sum_rows_f32"), fields: []string{"src0"}},
	"mean":       {check: checkMean, kernel: fixed("mean_f32"), fields: []string{"src0"}},
	"cumsum":     {check: checkCumsum, kernel: fixed("cumsum_f32"), fields: []string{"src0"}},
	"clamp":      {check: checkClamp, kernel: fixed("clamp_f32"), fields: []string{"src0"}, scalars: scalarsClamp},
	"fill":       {check: checkFill, kernel: fixed("fill_f32"), fields: []string{""}, scalars: scalarsFill},
	"diag":       {check: checkDiag, kernel: fixed("diag_f32"), fields: []string{"src0"}},
	"concat":     {check: checkConcat, kernel: fixed("concat_f32"), fields: []string{"src0", "src1"}, scalars: scalarsConcat},
	"repeat":     {check: checkRepeat, kernel: kernelRepeat, fields: []string{"src0"}},
	"pad":        {check: checkPad, kernel: fixed("pad_f32"), fields: []string{"src0"}, scalars: scalarsPad},
	"group_norm": {check: checkGroupNorm, kernel: fixed("group_norm_f32"), fields: []string{"src0"}, scalars: scalarsGroupNorm},
	"mul_mat_id": {check: checkMulMatID, kernel: kernelMulMatID, fields: []string{"src0", "src1", "src2"}},
	"solve_tri":  {check: checkSolveTri, kernel: fixed("solve_tri_f32"), fields: []string{"a", "b"}, dst: "x"},
}

func checkSqr(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("ne0", x.Ne[0], 16)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

func checkSumRows(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("src0.ne0", x.Ne[0], 16)
	c.contiguous("src0", x)
}

func checkMean(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
}

func checkCumsum(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.nb0("src0", x, 4)
	c.contiguous("dst", d)
}

func checkClamp(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

func scalarsClamp(x *nodeCtx, b *binder) error {
	lo, hi := x.p().F32("min"), x.p().F32("max")
	b.v.SetFloat("min", lo)
	b.v.SetFloat("max", hi)
	b.opF32(0, lo)
	b.opF32(1, hi)
	return nil
}

func checkFill(c *checker) {
	d := c.dst()
	c.f32("dst", d)
	c.contiguous("dst", d)
	c.mod("ne0", d.Ne[0], 16)
}

func scalarsFill(x *nodeCtx, b *binder) error {
	v := x.p().F32("c")
	b.v.SetFloat("c", v)
	b.opF32(0, v)
	return nil
}

func checkDiag(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("ne0", d.Ne[0], 16)
	if d.Ne[0] != d.Ne[1] {
		c.failf("dst.ne0 != dst.ne1 (ne0 = %d, ne1 = %d)", d.Ne[0], d.Ne[1])
	}
	if x.Ne[1] != 1 {
		c.failf("src0.ne1 != 1 (ne1 = %d)", x.Ne[1])
	}
	c.contiguous("src0", x)
	c.contiguous("dst", d)
}

// checkConcat accepts dim 0 (the fast path when both sources are aligned
// and contiguous, otherwise the stride-aware path) and dim >= 1 with
// every ne0 % 16 == 0 and both sources contiguous.
func checkConcat(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", a, "src1", b, "dst", d)
	c.contiguous("dst", d)
	if c.p().Int("dim") == 0 {
		return
	}
	c.mod("src0.ne0", a.Ne[0], 16)
	c.mod("src1.ne0", b.Ne[0], 16)
	c.mod("dst.ne0", d.Ne[0], 16)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
}

func scalarsConcat(x *nodeCtx, b *binder) error {
	dim := x.p().Int("dim")
	b.v.SetInt("dim", dim)
	b.op[0] = int32(dim)
	return nil
}

// checkRepeat: a same-shape repeat is a copy (cont_f32); otherwise
// repeat_f32 needs an aligned or scalar src0.ne0, an aligned dst.ne0 and
// whole repetitions.
func checkRepeat(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	if x.Ne == d.Ne {
		return
	}
	if x.Ne[0] != 1 && x.Ne[0]%16 != 0 {
		c.fail(CodeMultiple, "src0.ne0", fmt.Sprint(x.Ne[0]), "16", "src0.ne0 != 1 and src0.ne0 %% 16 != 0 (ne0 = %d)", x.Ne[0])
	}
	c.mod("dst.ne0", d.Ne[0], 16)
	for i := range ops.MaxDims {
		if x.Ne[i] == 0 || d.Ne[i]%x.Ne[i] != 0 {
			c.failf("dst.ne%d %% src0.ne%d != 0 (%d, %d)", i, i, d.Ne[i], x.Ne[i])
		}
	}
}

func kernelRepeat(x *nodeCtx) string {
	if x.src(0).Ne == x.dst().Ne {
		return "cont_f32"
	}
	return "repeat_f32"
}

func checkPad(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("dst", d)
	if n := d.Ne[0]; n == 0 || (n%16 != 0 && 16%n != 0) { // the crate tests the result's ne0
		c.fail(CodePadNe0, "ne0", fmt.Sprint(n), "16", "ne0 %% 16 != 0 and 16 %% ne0 != 0 (ne0 = %d)", n)
	}
	c.nb0("src0", x, 4)
	var lp0, rp0 int64 // a missing entry is 0, as ggml's zeroed op_params
	if lp := c.p().Ints("lp"); len(lp) > 0 {
		lp0 = lp[0]
	}
	if rp := c.p().Ints("rp"); len(rp) > 0 {
		rp0 = rp[0]
	}
	if lp0 != 0 || rp0 != 0 {
		c.fail(CodeNonZero, "lp0,rp0", fmt.Sprintf("%d,%d", lp0, rp0), "0", "lp0 or rp0 != 0 (lp0 = %d, rp0 = %d)", lp0, rp0)
	}
	if c.p().Bool("circular") {
		c.fail(CodeMode, "circular", "1", "0", "circular padding")
	}
}

// scalarsPad: op_params[0..7] are lp0, rp0, lp1, rp1, ... (interleaved).
func scalarsPad(x *nodeCtx, b *binder) error {
	lp, rp := x.p().Ints("lp"), x.p().Ints("rp")
	for i := range 4 {
		var l, r int64
		if i < len(lp) {
			l = lp[i]
		}
		if i < len(rp) {
			r = rp[i]
		}
		b.v.SetInt(fmt.Sprintf("lp[%d]", i), l)
		b.v.SetInt(fmt.Sprintf("rp[%d]", i), r)
		b.op[2*i], b.op[2*i+1] = int32(l), int32(r)
	}
	return nil
}

func checkGroupNorm(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("dst", d)
	c.nb0("src0", x, 4)
	if g := c.p().Int("n_groups"); g <= 0 {
		c.failf("n_groups <= 0 (n_groups = %d)", g)
	}
}

func scalarsGroupNorm(x *nodeCtx, b *binder) error {
	g, eps := x.p().Int("n_groups"), x.p().F32("eps")
	b.v.SetInt("n_groups", g)
	b.v.SetFloat("eps", eps)
	b.op[0] = int32(g)
	b.opF32(1, eps)
	return nil
}

func checkMulMatID(c *checker) {
	as, b, ids, d := c.src(0), c.src(1), c.src(2), c.dst()
	c.typeIn("dst", d, ops.F32)
	c.typeIn("src0", as, ops.Q8_0, ops.Q4_0, ops.F16, ops.F32)
	c.typeIn("src1", b, ops.F32)
	c.typeIn("src2", ids, ops.I32)
	c.nb0Elem("src0", as)
	c.nb0Elem("src1", b)
	c.nb0Elem("src2", ids)
	c.nb0("dst", d, 4)
	if !stridesOrdered(d) {
		c.fail(CodeStride, "dst", "", "", "dst strides are not ordered (nb = %s)", fmtNb(d))
	}
	if as.Ne[3] != 1 {
		c.failf("src0.ne3 != 1 (ne3 = %d)", as.Ne[3])
	}
	if b.Ne[3] != 1 {
		c.failf("src1.ne3 != 1 (ne3 = %d)", b.Ne[3])
	}
	if ids.Ne[2] != 1 || ids.Ne[3] != 1 {
		c.failf("src2 is not 2-D (ne = %s)", fmtNe(ids))
	}
	if ids.Ne[1] != b.Ne[2] {
		c.failf("src2.ne1 != src1.ne2 (src2.ne1 = %d, src1.ne2 = %d)", ids.Ne[1], b.Ne[2])
	}
	if as.Ne[0] != b.Ne[0] {
		c.failf("src0.ne0 != src1.ne0 (src0.ne0 = %d, src1.ne0 = %d)", as.Ne[0], b.Ne[0])
	}
	if b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0 {
		c.failf("src2.ne0 %% src1.ne1 != 0 (src2.ne0 = %d, src1.ne1 = %d)", ids.Ne[0], b.Ne[1])
	}
}

func kernelMulMatID(x *nodeCtx) string {
	switch x.src(0).Type {
	case ops.Q8_0:
		return "mul_mat_id_Q8_0"
	case ops.Q4_0:
		return "mul_mat_id_Q4_0"
	}
	return "mul_mat_id_f32"
}

func checkSolveTri(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", a, "src1", b, "dst", d)
	if a.Ne[0] != a.Ne[1] {
		c.failf("A is not square (ne0 = %d, ne1 = %d)", a.Ne[0], a.Ne[1])
	}
	if a.Ne[1] != b.Ne[1] {
		c.failf("A.ne1 != B.ne1 (A.ne1 = %d, B.ne1 = %d)", a.Ne[1], b.Ne[1])
	}
	c.mod("B.ne0", b.Ne[0], 16)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
	c.contiguous("dst", d)
	p := c.p()
	if (p.Has("left") && !p.Bool("left")) || (p.Has("lower") && !p.Bool("lower")) || p.Bool("uni") {
		c.fail(CodeMode, "left,lower,uni", fmt.Sprintf("%v,%v,%v", p.Bool("left"), p.Bool("lower"), p.Bool("uni")), "true,true,false", "only left, lower, non-unit solve_tri is implemented (left = %v, lower = %v, uni = %v)", p.Bool("left"), p.Bool("lower"), p.Bool("uni"))
	}
}

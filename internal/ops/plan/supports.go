package plan

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// nodeCtx is one node of a graph seen by the rules: its sources and result
// as host tensors, and the manifest that gives the enum values.
type nodeCtx struct {
	g   *Graph
	m   *abi.Manifest
	idx int
	n   *Node
}

func newNodeCtx(g *Graph, m *abi.Manifest, idx int) *nodeCtx {
	return &nodeCtx{g: g, m: m, idx: idx, n: &g.Nodes[idx]}
}

// has reports whether source i is present (optional sources may be absent).
func (x *nodeCtx) has(i int) bool { return i < len(x.n.Src) }

// src is source i's tensor, or nil when absent.
func (x *nodeCtx) src(i int) *ops.Tensor {
	if !x.has(i) {
		return nil
	}
	return x.g.Values[x.n.Src[i]].T
}

// srcValue is source i's value.
func (x *nodeCtx) srcValue(i int) *Value { return &x.g.Values[x.n.Src[i]] }

// dst is the node's result tensor.
func (x *nodeCtx) dst() *ops.Tensor { return x.g.Values[x.n.Out].T }

func (x *nodeCtx) p() ops.Params { return x.n.Params }

// checker collects the failed supports_op conditions of one node.
type checker struct {
	*nodeCtx
	reasons []Reason
}

// failf adds an op-specific condition with no suggestion (CodeCondition).
func (c *checker) failf(format string, args ...any) {
	c.fail(CodeCondition, "", "", "", format, args...)
}

// fail adds a failed condition with its code, subject, values and text.
func (c *checker) fail(code ReasonCode, subject, have, want, format string, args ...any) {
	c.reasons = append(c.reasons, Reason{Code: code, Subject: subject, Have: have, Want: want, Text: fmt.Sprintf(format, args...)})
}

// typeIn requires t's type to be one of want.
func (c *checker) typeIn(label string, t *ops.Tensor, want ...ops.Type) bool {
	for _, w := range want {
		if t.Type == w {
			return true
		}
	}
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.String()
	}
	if len(want) == 1 {
		c.fail(CodeType, label, t.Type.String(), names[0], "%s type %s is not %s", label, t.Type, want[0])
	} else {
		c.fail(CodeType, label, t.Type.String(), strings.Join(names, ","), "%s type %s not in %s", label, t.Type, typeList(want))
	}
	return false
}

// f32 requires every listed tensor to be F32 (labels and tensors alternate).
func (c *checker) f32(pairs ...any) {
	for i := 0; i+1 < len(pairs); i += 2 {
		c.typeIn(pairs[i].(string), pairs[i+1].(*ops.Tensor), ops.F32)
	}
}

func (c *checker) contiguous(label string, t *ops.Tensor) {
	if !isContiguous(t) {
		c.fail(CodeNotContiguous, label, "", "", "%s is not contiguous (ne = %s, nb = %s)", label, fmtNe(t), fmtNb(t))
	}
}

func (c *checker) contiguous1(label string, t *ops.Tensor) {
	if !isContiguous1(t) {
		c.fail(CodeRowsNotContiguous, label, "", "", "%s rows are not contiguous (ne = %s, nb = %s)", label, fmtNe(t), fmtNb(t))
	}
}

func (c *checker) contiguousRows(label string, t *ops.Tensor) {
	if !isContiguousRows(t) {
		c.fail(CodeRowElems, label, "", "", "%s elements of a row are not contiguous (nb0 = %d, type size %d)", label, t.Nb[0], t.Type.TypeSize())
	}
}

// nb0 requires nb[0] == want (the element size, 4 for f32).
func (c *checker) nb0(label string, t *ops.Tensor, want int) {
	if t.Nb[0] != uint64(want) {
		c.fail(CodeStride, label, fmt.Sprint(t.Nb[0]), fmt.Sprint(want), "%s.nb0 != %d (nb0 = %d)", label, want, t.Nb[0])
	}
}

// nb0Elem requires nb[0] == the type size.
func (c *checker) nb0Elem(label string, t *ops.Tensor) {
	if ts := t.Type.TypeSize(); t.Nb[0] != uint64(ts) {
		c.fail(CodeStride, label, fmt.Sprint(t.Nb[0]), fmt.Sprint(ts), "%s.nb0 != type size (nb0 = %d, type size = %d)", label, t.Nb[0], ts)
	}
}

// mod requires v % k == 0; what names v ("ne0", "src1.ne0", "nelements").
func (c *checker) mod(what string, v, k int64) {
	if v%k != 0 {
		c.fail(CodeMultiple, what, fmt.Sprint(v), fmt.Sprint(k), "%s %% %d != 0 (%s = %d)", what, k, what, v)
	}
}

func (c *checker) notImplemented() {
	if ggmlETOps[c.n.Op] {
		c.fail(CodeNotModelled, string(c.n.Op), "", "", "op %s: et does not model ggml-et's supports_op for it yet", c.n.Op)
		return
	}
	if c.n.Op == ops.OpXielu {
		// ggml builds xielu as GGML_OP_UNARY: ggml-et dispatches UNARY but
		// does not accept the XIELU sub-op.
		c.fail(CodeNoKernel, "xielu", "", "", "unary op xielu is not accepted by ggml-et")
		return
	}
	c.fail(CodeNoKernel, string(c.n.Op), "", "", "op %s is not implemented by ggml-et", c.n.Op)
}

// Supports is ggml-et's supports_op for node idx of g (the crate's
// ggml-et.cpp, reference/ggml-et-backend.md §1.2 and §1.3): every failed
// condition is a reason of the form "<what> (<values>)". View ops are
// supported (ggml-et skips them); an op ggml-et does not dispatch is
// unsupported with the reason "op X is not implemented by ggml-et".
func Supports(g *Graph, idx int, m *abi.Manifest) Verdict {
	if g == nil || idx < 0 || idx >= len(g.Nodes) {
		return Verdict{Reasons: []Reason{{Code: CodeCondition, Text: fmt.Sprintf("no node %d in the graph", idx)}}}
	}
	if m == nil {
		m = abi.Default()
	}
	n := &g.Nodes[idx]
	if n.Info != nil && n.Info.View {
		return Verdict{Supported: true}
	}
	c := &checker{nodeCtx: newNodeCtx(g, m, idx)}
	r, ok := ruleFor(n.Op)
	if !ok || r.check == nil {
		c.notImplemented()
	} else {
		r.check(c)
	}
	return Verdict{Supported: len(c.reasons) == 0, Reasons: c.reasons}
}

// --- the per-op checks (reference/ggml-et-backend.md §1.2, §1.3) ---

// checkMulMat accepts the four cases of §1.3: (A) f32×f32 or f16×f16,
// aligned to 16 and fully contiguous; (B) any f16/f32 × f16/f32 with
// element-sized nb0 everywhere and ordered dst strides; (C) q8_0×f32 and
// (D) q4_0×f32 with B's checks. Q4_K, every other quant type and a
// non-f32 dst are unsupported.
func checkMulMat(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.typeIn("dst", d, ops.F32)
	switch a.Type {
	case ops.F32, ops.F16:
		c.typeIn("src1", b, ops.F32, ops.F16)
	case ops.Q8_0, ops.Q4_0:
		if b.Type != ops.F32 {
			c.fail(CodeType, "src1", b.Type.String(), "f32", "src1 type %s is not f32 (%s weights need f32 activations)", b.Type, a.Type)
		}
	default:
		c.fail(CodeType, "src0", a.Type.String(), "f32,f16,q8_0,q4_0", "src0 type %s not in {f32, f16, q8_0, q4_0}", a.Type)
	}
	if len(c.reasons) > 0 {
		return
	}
	if a.Type == b.Type && (a.Type == ops.F32 || a.Type == ops.F16) && mulMatAligned(a, b, d) &&
		isContiguous(a) && isContiguous(b) {
		return // case A
	}
	// Cases B, C, D.
	c.nb0Elem("src0", a)
	c.nb0Elem("src1", b)
	c.nb0Elem("dst", d)
	if !stridesOrdered(d) {
		c.fail(CodeStride, "dst", "", "", "dst strides are not ordered (nb = %s)", fmtNb(d))
	}
}

// mulMatAligned is the alignment of case A and of the matrix-engine
// kernels: dst.ne0, K and M multiples of 16, and src1.ne0 != 1.
func mulMatAligned(a, b, d *ops.Tensor) bool {
	return d.Ne[0]%16 == 0 && a.Ne[0]%16 == 0 && a.Ne[1]%16 == 0 && b.Ne[0] != 1
}

// checkBinary is ADD, SUB and MUL (el_map_f32).
func checkBinary(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", a, "src1", b, "dst", d)
	c.nb0("dst", d, 4)
	c.nb0("src0", a, 4)
	if b.Nb[0] != 4 && b.Ne[0] != 1 {
		c.fail(CodeStride, "src1", fmt.Sprint(b.Nb[0]), "4", "src1.nb0 != 4 and src1.ne0 != 1 (nb0 = %d, ne0 = %d)", b.Nb[0], b.Ne[0])
	}
	if want := uint64(d.Ne[0]) * 4; d.Nb[1] != want {
		c.fail(CodeStride, "dst", fmt.Sprint(d.Nb[1]), fmt.Sprint(want), "dst.nb1 != ne0*4 (nb1 = %d, ne0*4 = %d)", d.Nb[1], want)
	}
}

// checkNorm is RMS_NORM, NORM and L2_NORM.
func checkNorm(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.mod("ne0", x.Ne[0], 16)
	c.contiguous("dst", d)
	c.nb0("src0", x, 4)
}

func checkScale(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	c.mod("nelements", d.NElements(), 16)
}

func checkSoftMax(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	if x.Ne[0] <= 1 {
		c.failf("src0.ne0 <= 1 (ne0 = %d)", x.Ne[0])
	}
	mi, si := ops.MaskSinks(1, len(c.n.Src), c.p())
	if mi >= 0 {
		mask := c.src(mi)
		c.typeIn("mask", mask, ops.F32)
		c.contiguous("mask", mask)
	}
	if si >= 0 {
		sinks := c.src(si)
		c.typeIn("sinks", sinks, ops.F32)
		c.contiguous("sinks", sinks)
	}
}

// maskSinksFields maps the optional sources of soft_max (fixed = 1) and
// flash_attn_ext (fixed = 3) to their params-struct fields: ggml's
// src[fixed] is the mask and src[fixed+1] the sinks, whichever of them a
// node has.
func maskSinksFields(fixed int, names []string, maskField, sinksField string) func(x *nodeCtx) []string {
	return func(x *nodeCtx) []string {
		f := append([]string(nil), names...)
		mi, si := ops.MaskSinks(fixed, len(x.n.Src), x.p())
		if mi >= 0 {
			f = append(f, maskField)
		}
		if si >= 0 {
			f = append(f, sinksField)
		}
		return f
	}
}

// ropeMaxDims is the largest n_dims rope_f32 handles.
const ropeMaxDims = 512

func checkRope(c *checker) {
	x, pos, d := c.src(0), c.src(1), c.dst()
	c.typeIn("src0", x, ops.F32)
	c.typeIn("pos", pos, ops.I32)
	c.typeIn("dst", d, ops.F32)
	c.contiguous("dst", d)
	c.nb0("src0", x, 4)
	nDims := c.p().Int("n_dims")
	if nDims > ropeMaxDims {
		c.fail(CodeMax, "n_dims", fmt.Sprint(nDims), fmt.Sprint(ropeMaxDims), "n_dims > %d (n_dims = %d)", ropeMaxDims, nDims)
	}
	if off := c.srcValue(0).T.Offs; c.srcValue(0).IsView(c.n.Src[0]) && off != 0 {
		c.fail(CodeNonZero, "src0.view_offs", fmt.Sprint(off), "0", "src0.view_offs != 0 (view_offs = %d)", off)
	}
	op, err := ropeOpParams(c.nodeCtx)
	if err != nil {
		c.failf("%v", err)
		return
	}
	if op[15] != 0 {
		c.failf("op_params[15] != 0 (rope offset = %d)", op[15])
	}
	mode := c.p().Str("mode")
	switch mode {
	case "normal":
	case "neox":
		c.mod("n_dims", nDims, 16)
	case "imrope":
		c.mod("n_dims", nDims, 16)
		s := c.p().Ints("sections")
		if len(s) < 3 || (s[0] == 0 && s[1] == 0 && s[2] == 0) {
			c.fail(CodeNonZero, "sections", fmt.Sprint(s), "", "imrope sections[0..2] are all zero (sections = %v)", s)
		}
	default:
		c.fail(CodeMode, "mode", fmt.Sprint(mode), "normal,neox,imrope", "rope mode %s not in {normal, neox, imrope}", mode)
	}
}

// gluAccepted lists the GLU sub-ops ggml-et's supports_op accepts. The
// crate's ggml-et.cpp also accepts swiglu_clamp, which ggml_et_op_glu
// never computes (reference §1.1); this ggml has no such op (its
// manifest has no value for it), so it is not listed.
var gluAccepted = map[string]bool{
	"reglu": true, "geglu": true, "swiglu": true, "swiglu_oai": true, "geglu_erf": true, "geglu_quick": true,
}

func checkGLU(c *checker) {
	a, d := c.src(0), c.dst()
	if op := c.p().Str("op"); !gluAccepted[op] {
		c.fail(CodeNoKernel, fmt.Sprint(op), "", "", "glu op %s is not accepted by ggml-et", op)
	}
	c.f32("src0", a, "dst", d)
	c.mod("nelements", d.NElements(), 16)
	c.contiguous1("dst", d)
	c.contiguous1("src0", a)
	if b := c.src(1); b != nil {
		c.typeIn("src1", b, ops.F32)
		c.contiguous1("src1", b)
		if a.Ne[0] != b.Ne[0] || a.Ne[0] != d.Ne[0] {
			c.failf("split glu needs equal ne0 (src0.ne0 = %d, src1.ne0 = %d, dst.ne0 = %d)", a.Ne[0], b.Ne[0], d.Ne[0])
		}
	} else if a.Ne[0] != 2*d.Ne[0] {
		c.failf("src0.ne0 != 2*dst.ne0 (src0.ne0 = %d, dst.ne0 = %d)", a.Ne[0], d.Ne[0])
	}
}

// unaryAccepted lists the 21 unary sub-ops ggml-et accepts (XIELU is not
// one of them).
var unaryAccepted = map[string]bool{
	"abs": true, "sgn": true, "neg": true, "step": true, "tanh": true, "elu": true, "relu": true,
	"sigmoid": true, "gelu": true, "gelu_quick": true, "silu": true, "hardswish": true,
	"hardsigmoid": true, "exp": true, "expm1": true, "softplus": true, "gelu_erf": true,
	"floor": true, "ceil": true, "round": true, "trunc": true,
}

func checkUnary(c *checker) {
	x, d := c.src(0), c.dst()
	if op := c.p().Str("op"); !unaryAccepted[op] {
		c.fail(CodeNoKernel, fmt.Sprint(op), "", "", "unary op %s is not accepted by ggml-et", op)
	}
	c.f32("src0", x, "dst", d)
	c.mod("nelements", d.NElements(), 16)
	c.nb0("dst", d, 4)
	c.nb0("src0", x, 4)
}

func checkGetRows(c *checker) {
	data, rows, d := c.src(0), c.src(1), c.dst()
	c.typeIn("dst", d, ops.F32)
	c.typeIn("src0", data, ops.F32, ops.F16, ops.Q4_0, ops.Q8_0, ops.Q4_K)
	c.typeIn("src1", rows, ops.I32)
	c.contiguous("src0", data)
	c.contiguous("src1", rows)
	c.contiguous("dst", d)
	if data.Ne[2] != rows.Ne[1] {
		c.failf("src0.ne2 != src1.ne1 (src0.ne2 = %d, src1.ne1 = %d)", data.Ne[2], rows.Ne[1])
	}
	if rows.Ne[3] != 1 {
		c.failf("src1.ne3 != 1 (ne3 = %d)", rows.Ne[3])
	}
}

// cpyKernels maps a (src, dst) type pair of CPY to its kernel.
var cpyKernels = map[[2]ops.Type]string{
	{ops.F32, ops.F32}: "cont_f32",
	{ops.F16, ops.F16}: "cont_f16",
	{ops.F32, ops.F16}: "cpy_f32_f16",
}

func checkCpy(c *checker) {
	x, d := c.src(0), c.dst()
	if _, ok := cpyKernels[[2]ops.Type{x.Type, d.Type}]; !ok {
		c.fail(CodeMode, "cpy", x.Type.String()+" -> "+d.Type.String(), "f32 -> f32,f16 -> f16,f32 -> f16", "cpy %s -> %s not in {f32 -> f32, f16 -> f16, f32 -> f16}", x.Type, d.Type)
	}
	c.contiguous("dst", d)
}

func checkCont(c *checker) {
	x, d := c.src(0), c.dst()
	c.typeIn("src0", x, ops.F32, ops.F16)
	c.contiguous("dst", d)
	if c.g.Values[c.n.Out].Base == c.srcValue(0).Base {
		c.fail(CodeAliased, "dst", "", "", "dst aliases src0 (both in the memory of %s)", c.g.Values[c.srcValue(0).Base].Name)
	}
}

// checkSetRows: ggml's src[0] is the rows to write (case source 1), src[1]
// the i64 indices (case source 2) and the result is a view of the
// destination (case source 0).
func checkSetRows(c *checker) {
	into, src, idx := c.src(0), c.src(1), c.src(2)
	c.typeIn("src0", src, ops.F32)
	c.typeIn("src1", idx, ops.I64)
	c.typeIn("dst", into, ops.F32, ops.F16)
	c.contiguousRows("dst", into)
	c.contiguousRows("src0", src)
	c.contiguous("src1", idx)
	if src.Ne[0] != into.Ne[0] {
		c.failf("src0.ne0 != dst.ne0 (src0.ne0 = %d, dst.ne0 = %d)", src.Ne[0], into.Ne[0])
	}
	if src.Ne[1] != idx.Ne[0] {
		c.failf("src0.ne1 != src1.ne0 (src0.ne1 = %d, src1.ne0 = %d)", src.Ne[1], idx.Ne[0])
	}
	if idx.Ne[1] == 0 || idx.Ne[2] == 0 || src.Ne[2]%idx.Ne[1] != 0 || src.Ne[3]%idx.Ne[2] != 0 {
		c.failf("src1 does not broadcast over src0 (src0.ne = %s, src1.ne = %s)", fmtNe(src), fmtNe(idx))
	}
	if idx.Ne[3] != 1 {
		c.failf("src1.ne3 != 1 (ne3 = %d)", idx.Ne[3])
	}
}

// faMaxHead is the largest head size (dk, dv) of the flash-attention kernels.
const faMaxHead = 512

func checkFlashAttn(c *checker) {
	q, k, v, d := c.src(0), c.src(1), c.src(2), c.dst()
	c.typeIn("q", q, ops.F32)
	c.typeIn("dst", d, ops.F32)
	if k.Type != ops.F16 {
		c.fail(CodeType, "k", k.Type.String(), "f16", "k type %s is not f16 (ggml-et accepts only f16 K/V)", k.Type)
	}
	if v.Type != ops.F16 {
		c.fail(CodeType, "v", v.Type.String(), "f16", "v type %s is not f16 (ggml-et accepts only f16 K/V)", v.Type)
	}
	mi, si := ops.MaskSinks(3, len(c.n.Src), c.p())
	if si >= 0 {
		c.failf("sinks (src[4]) are not supported by ggml-et's flash attention")
	}
	c.contiguousRows("dst", d)
	c.contiguousRows("q", q)
	dk, dv := q.Ne[0], v.Ne[0]
	c.mod("dk", dk, 32)
	if mi >= 0 {
		c.typeIn("mask", c.src(mi), ops.F16, ops.F32)
	}
	if mb := c.p().F32("max_bias"); mb != 0 {
		c.fail(CodeNonZero, "max_bias", fmt.Sprint(mb), "0", "max_bias != 0 (max_bias = %g)", mb)
	}
	if sc := c.p().F32("logit_softcap"); sc != 0 {
		c.fail(CodeNonZero, "logit_softcap", fmt.Sprint(sc), "0", "logit_softcap != 0 (logit_softcap = %g)", sc)
	}
	c.nb0("q", q, 4)
	c.nb0("dst", d, 4)
	c.nb0Elem("k", k)
	c.nb0Elem("v", v)
	if dk != k.Ne[0] {
		c.failf("dk != k.ne0 (dk = %d, k.ne0 = %d)", dk, k.Ne[0])
	}
	if dv != d.Ne[0] {
		c.failf("dv != dst.ne0 (dv = %d, dst.ne0 = %d)", dv, d.Ne[0])
	}
	if dk > faMaxHead {
		c.fail(CodeMax, "dk", fmt.Sprint(dk), fmt.Sprint(faMaxHead), "dk > %d (dk = %d)", faMaxHead, dk)
	}
	if dv > faMaxHead {
		c.fail(CodeMax, "dv", fmt.Sprint(dv), fmt.Sprint(faMaxHead), "dv > %d (dv = %d)", faMaxHead, dv)
	}
	if k.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 {
		c.failf("nhq %% nhk != 0 (nhq = %d, nhk = %d)", q.Ne[2], k.Ne[2])
	}
	if v.Ne[1] != k.Ne[1] || v.Ne[2] != k.Ne[2] || v.Ne[3] != k.Ne[3] {
		c.failf("v and k differ in n_kv, heads or batch (k.ne = %s, v.ne = %s)", fmtNe(k), fmtNe(v))
	}
	if q.Ne[3] != k.Ne[3] {
		c.failf("q.ne3 != k.ne3 (q.ne3 = %d, k.ne3 = %d)", q.Ne[3], k.Ne[3])
	}
	if d.Ne[1] != q.Ne[2] || d.Ne[2] != q.Ne[1] || d.Ne[3] != q.Ne[3] {
		c.failf("dst shape does not match q (q.ne = %s, dst.ne = %s)", fmtNe(q), fmtNe(d))
	}
}

package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// The fusions of ggml_backend_et_graph_compute, in the order it tries
// them (reference/ggml-et-backend.md §1.1).
const (
	FusionRMSNormMul = "rms_norm+mul"
	FusionMulMatAdd  = "mul_mat+add"
)

// fusion is one fusion rule: two consecutive nodes first, second.
type fusion struct {
	name          string
	first, second ops.Op
	// check adds a reason per failed ggml_et_can_fuse condition.
	check func(f *fusionCtx)
	// build fills the fused launch.
	build func(f *fusionCtx, s *Step)
}

var fusions = []fusion{
	{name: FusionRMSNormMul, first: ops.OpRMSNorm, second: ops.OpMul, check: checkRMSNormMul, build: buildRMSNormMul},
	{name: FusionMulMatAdd, first: ops.OpMulMat, second: ops.OpAdd, check: checkMulMatAdd, build: buildMulMatAdd},
}

// fusionCtx holds the two nodes of a fusion candidate.
type fusionCtx struct {
	g       *Graph
	i       int // index of the first node; the second is i+1
	a, b    *Node
	other   int // value index of b's operand that is not a's result (-1 if none)
	reasons []string
}

func (f *fusionCtx) failf(format string, args ...any) {
	f.reasons = append(f.reasons, fmt.Sprintf(format, args...))
}

func (f *fusionCtx) t(v int) *ops.Tensor { return f.g.Values[v].T }

// canFuse is ggml_can_fuse for two nodes (the ops already match, and
// every node of an et graph is a compute node): a's result has exactly one
// use, is not a view and not a graph output; b takes it as src0 or src1;
// a and b have the same shape.
func (f *fusionCtx) canFuse(uses []int) {
	out := f.a.Out
	name := f.g.Values[out].Name
	if uses[out] != 1 {
		f.failf("%s is used %d times (want exactly 1)", name, uses[out])
	}
	if f.g.Values[out].IsView(out) || (f.a.Info != nil && f.a.Info.View) {
		f.failf("%s is a view", name)
	}
	if f.g.IsOutput(out) {
		f.failf("%s is a graph output", name)
	}
	f.other = -1
	switch {
	case len(f.b.Src) > 0 && f.b.Src[0] == out:
		if len(f.b.Src) > 1 {
			f.other = f.b.Src[1]
		}
	case len(f.b.Src) > 1 && f.b.Src[1] == out:
		f.other = f.b.Src[0]
	default:
		f.failf("%s does not take %s as src0 or src1", f.b.Name, name)
	}
	if ta, tb := f.t(out), f.t(f.b.Out); ta.Ne != tb.Ne {
		f.failf("shapes differ (%s %s, %s %s)", name, fmtNe(ta), f.b.Name, fmtNe(tb))
	}
}

// checkRMSNormMul is ggml_et_can_fuse for RMS_NORM+MUL: input, mul and
// weights f32; input contiguous; weights rows contiguous; both ne0 % 16
// == 0; no broadcast of the weights along dim 0.
func checkRMSNormMul(f *fusionCtx) {
	if f.other < 0 {
		return
	}
	in, mul, w := f.t(f.a.Src[0]), f.t(f.b.Out), f.t(f.other)
	for _, x := range []struct {
		what string
		t    *ops.Tensor
	}{{"norm input", in}, {"mul", mul}, {"weights", w}} {
		if x.t.Type != ops.F32 {
			f.failf("%s type %s is not f32", x.what, x.t.Type)
		}
	}
	if !isContiguous(in) {
		f.failf("norm input is not contiguous (ne = %s, nb = %s)", fmtNe(in), fmtNb(in))
	}
	if !isContiguousRows(w) {
		f.failf("weights rows are not contiguous (nb0 = %d)", w.Nb[0])
	}
	if in.Ne[0]%16 != 0 {
		f.failf("input.ne0 %% 16 != 0 (ne0 = %d)", in.Ne[0])
	}
	if w.Ne[0]%16 != 0 {
		f.failf("weights.ne0 %% 16 != 0 (ne0 = %d)", w.Ne[0])
	}
	if w.Ne[0] != in.Ne[0] {
		f.failf("weights.ne0 != input.ne0 (weights.ne0 = %d, input.ne0 = %d)", w.Ne[0], in.Ne[0])
	}
}

func buildRMSNormMul(f *fusionCtx, s *Step) {
	s.Kernel = "rms_norm_mul_f32"
	s.Tensors = map[string]int{"src0": f.a.Src[0], "src1": f.other, "dst": f.b.Out}
	s.Scalars.SetFloat("eps", f.a.Params.F32("eps"))
}

// checkMulMatAdd is ggml_et_can_fuse for MUL_MAT+ADD: mm f32 with q8_0
// weights and f32 activations; add f32; the bias f32 with exactly mm's
// shape; bias and mm contiguous; bias.nb == add.nb.
func checkMulMatAdd(f *fusionCtx) {
	if f.other < 0 {
		return
	}
	mm, a, b := f.t(f.a.Out), f.t(f.a.Src[0]), f.t(f.a.Src[1])
	add, bias := f.t(f.b.Out), f.t(f.other)
	if mm.Type != ops.F32 {
		f.failf("mul_mat type %s is not f32", mm.Type)
	}
	if a.Type != ops.Q8_0 {
		f.failf("mul_mat src0 type %s is not q8_0", a.Type)
	}
	if b.Type != ops.F32 {
		f.failf("mul_mat src1 type %s is not f32", b.Type)
	}
	if add.Type != ops.F32 {
		f.failf("add type %s is not f32", add.Type)
	}
	if bias.Type != ops.F32 {
		f.failf("bias type %s is not f32", bias.Type)
	}
	if bias.Ne != mm.Ne {
		f.failf("bias shape != mul_mat shape (bias %s, mul_mat %s)", fmtNe(bias), fmtNe(mm))
	}
	if !isContiguous(bias) {
		f.failf("bias is not contiguous (ne = %s, nb = %s)", fmtNe(bias), fmtNb(bias))
	}
	if !isContiguous(mm) {
		f.failf("mul_mat result is not contiguous (ne = %s, nb = %s)", fmtNe(mm), fmtNb(mm))
	}
	if bias.Nb != add.Nb {
		f.failf("bias.nb != add.nb (bias.nb = %s, add.nb = %s)", fmtNb(bias), fmtNb(add))
	}
}

func buildMulMatAdd(f *fusionCtx, s *Step) {
	s.Kernel = "mul_mat_Q8_0"
	s.Tensors = map[string]int{"src0": f.a.Src[0], "src1": f.a.Src[1], "dst": f.b.Out, "bias": f.other}
}

// tryFusion checks the fusions that start at node i. It returns the
// fusion that applies (nil if none) and, for each candidate that matched
// the op sequence but was rejected, "<fusion>: <reason>" lines.
func tryFusion(g *Graph, i int, uses []int, verdicts []Verdict) (*fusion, *fusionCtx, []string) {
	if i+1 >= len(g.Nodes) {
		return nil, nil, nil
	}
	var missed []string
	for k := range fusions {
		fu := &fusions[k]
		a, b := &g.Nodes[i], &g.Nodes[i+1]
		if a.Op != fu.first || b.Op != fu.second {
			continue
		}
		f := &fusionCtx{g: g, i: i, a: a, b: b}
		if !verdicts[i+1].Supported {
			f.failf("%s is not supported by ggml-et", b.Name)
		}
		f.canFuse(uses)
		fu.check(f)
		if len(f.reasons) == 0 {
			return fu, f, missed
		}
		for _, r := range f.reasons {
			missed = append(missed, fu.name+": "+r)
		}
	}
	return nil, nil, missed
}

package plan

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// rawGraph builds a one-node graph without the catalog (the rows of
// the rules_<family>.go tables apply to ops the catalog may not have yet).
func rawGraph(op string, params ops.Params, dst *ops.Tensor, srcs ...*ops.Tensor) *Graph {
	g := NewGraph()
	n := Node{Name: "y", Op: ops.Op(op), Params: params}
	for i, s := range srcs {
		name := string(rune('a' + i))
		j, _ := g.AddLeaf(name, s)
		n.Src = append(n.Src, j)
	}
	dst.Name = "y"
	n.Out = len(g.Values)
	g.Values = append(g.Values, Value{Name: "y", T: dst, Base: n.Out, Node: 0})
	g.byName["y"] = n.Out
	g.Nodes = append(g.Nodes, n)
	g.Outputs = []int{n.Out}
	return g
}

func TestFamilyRules(t *testing.T) {
	f32 := func(ne ...int64) *ops.Tensor { return ops.New(ops.F32, ne...) }
	tests := []struct {
		name    string
		op      string
		params  ops.Params
		dst     *ops.Tensor
		srcs    []*ops.Tensor
		kernel  string // "" = unsupported
		reasons []string
		scalars map[string]float64
	}{
		{name: "sqr", op: "sqr", dst: f32(16, 2), srcs: []*ops.Tensor{f32(16, 2)}, kernel: "sqr_f32"},
		{name: "sqr ne0", op: "sqr", dst: f32(20, 2), srcs: []*ops.Tensor{f32(20, 2)}, reasons: []string{"ne0 % 16 != 0 (ne0 = 20)"}},
		{name: "sum_rows", op: "sum_rows", dst: f32(1, 2), srcs: []*ops.Tensor{f32(32, 2)}, kernel: "sum_rows_f32"},
		{name: "sum_rows ne0", op: "sum_rows", dst: f32(1, 2), srcs: []*ops.Tensor{f32(20, 2)}, reasons: []string{"src0.ne0 % 16 != 0 (src0.ne0 = 20)"}},
		{name: "mean any ne0", op: "mean", dst: f32(1, 2), srcs: []*ops.Tensor{f32(20, 2)}, kernel: "mean_f32"},
		{name: "cumsum", op: "cumsum", dst: f32(20, 2), srcs: []*ops.Tensor{f32(20, 2)}, kernel: "cumsum_f32"},
		{name: "clamp", op: "clamp", params: ops.Params{"min": -1.0, "max": 2.5}, dst: f32(20), srcs: []*ops.Tensor{f32(20)},
			kernel: "clamp_f32", scalars: map[string]float64{"min": -1, "max": 2.5}},
		{name: "clamp f16", op: "clamp", dst: ops.New(ops.F16, 16), srcs: []*ops.Tensor{ops.New(ops.F16, 16)}, reasons: []string{"src0 type f16 is not f32"}},
		{name: "fill", op: "fill", params: ops.Params{"c": 0.5}, dst: f32(16, 3), srcs: []*ops.Tensor{f32(16, 3)},
			kernel: "fill_f32", scalars: map[string]float64{"c": 0.5}},
		{name: "fill ne0", op: "fill", dst: f32(8), srcs: []*ops.Tensor{f32(8)}, reasons: []string{"ne0 % 16 != 0 (ne0 = 8)"}},
		{name: "diag", op: "diag", dst: f32(16, 16), srcs: []*ops.Tensor{f32(16)}, kernel: "diag_f32"},
		{name: "concat dim 0 unaligned", op: "concat", params: ops.Params{"dim": int64(0)}, dst: f32(30, 2), srcs: []*ops.Tensor{f32(20, 2), f32(10, 2)},
			kernel: "concat_f32", scalars: map[string]float64{"dim": 0}},
		{name: "concat dim 1 unaligned", op: "concat", params: ops.Params{"dim": int64(1)}, dst: f32(20, 4), srcs: []*ops.Tensor{f32(20, 2), f32(20, 2)},
			reasons: []string{"src0.ne0 % 16 != 0 (src0.ne0 = 20)", "dst.ne0 % 16 != 0"}},
		{name: "repeat same shape", op: "repeat", dst: f32(20, 2), srcs: []*ops.Tensor{f32(20, 2)}, kernel: "cont_f32"},
		{name: "repeat", op: "repeat", dst: f32(32, 4), srcs: []*ops.Tensor{f32(16, 2)}, kernel: "repeat_f32"},
		{name: "repeat ne0 3", op: "repeat", dst: f32(48, 2), srcs: []*ops.Tensor{f32(3, 2)}, reasons: []string{"src0.ne0 != 1 and src0.ne0 % 16 != 0 (ne0 = 3)"}},
		{name: "pad", op: "pad", params: ops.Params{"lp": []int64{0, 1, 0, 0}, "rp": []int64{0, 2, 0, 0}}, dst: f32(16, 5), srcs: []*ops.Tensor{f32(16, 2)},
			kernel: "pad_f32", scalars: map[string]float64{"lp[1]": 1, "rp[1]": 2, "lp[0]": 0}},
		{name: "pad dim 0", op: "pad", params: ops.Params{"lp": []int64{1, 0, 0, 0}, "rp": []int64{0, 0, 0, 0}}, dst: f32(17, 2), srcs: []*ops.Tensor{f32(16, 2)},
			reasons: []string{"lp0 or rp0 != 0 (lp0 = 1, rp0 = 0)"}},
		{name: "group_norm", op: "group_norm", params: ops.Params{"n_groups": int64(4), "eps": 1e-6}, dst: f32(8, 8, 8), srcs: []*ops.Tensor{f32(8, 8, 8)},
			kernel: "group_norm_f32", scalars: map[string]float64{"n_groups": 4, "eps": float64(float32(1e-6))}},
		{name: "mul_mat_id q8_0", op: "mul_mat_id", dst: f32(16, 2, 3), srcs: []*ops.Tensor{ops.New(ops.Q8_0, 64, 16, 4), f32(64, 1, 3), ops.New(ops.I32, 2, 3)},
			kernel: "mul_mat_id_Q8_0"},
		{name: "mul_mat_id f16", op: "mul_mat_id", dst: f32(16, 2, 3), srcs: []*ops.Tensor{ops.New(ops.F16, 64, 16, 4), f32(64, 2, 3), ops.New(ops.I32, 2, 3)},
			kernel: "mul_mat_id_f32"},
		{name: "mul_mat_id q4_K", op: "mul_mat_id", dst: f32(16, 2, 3), srcs: []*ops.Tensor{ops.New(ops.Q4_K, 256, 16, 4), f32(256, 2, 3), ops.New(ops.I32, 2, 3)},
			reasons: []string{"src0 type q4_K not in {q8_0, q4_0, f16, f32}"}},
		{name: "solve_tri", op: "solve_tri", params: ops.Params{"left": true, "lower": true, "uni": false}, dst: f32(16, 8), srcs: []*ops.Tensor{f32(8, 8), f32(16, 8)},
			kernel: "solve_tri_f32"},
		{name: "solve_tri B.ne0", op: "solve_tri", dst: f32(4, 8), srcs: []*ops.Tensor{f32(8, 8), f32(4, 8)}, reasons: []string{"B.ne0 % 16 != 0 (B.ne0 = 4)"}},
	}
	m := abi.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := tt.params
			if params == nil {
				params = ops.Params{}
			}
			g := rawGraph(tt.op, params, tt.dst, tt.srcs...)
			p, err := Build(g, m, Options{Uberkernel: true})
			if err != nil {
				t.Fatal(err)
			}
			s := &p.Steps[0]
			if tt.kernel == "" {
				if s.Kind != StepFallback {
					t.Fatalf("kind %s kernel %s, want fallback", s.Kind, s.Kernel)
				}
				hasReasons(t, s.Verdict.Reasons, tt.reasons...)
				return
			}
			if s.Kind != StepLaunch || s.Kernel != tt.kernel {
				t.Fatalf("kind %s kernel %q, want launch %q (reasons %q)", s.Kind, s.Kernel, tt.kernel, s.Verdict.Reasons)
			}
			_, wantBatch := m.UberkernelID(tt.kernel)
			if s.Batchable != wantBatch {
				t.Errorf("batchable %v, want %v", s.Batchable, wantBatch)
			}
			raw, err := p.Encode(s, func(base int) uint64 { return 0x1000 * uint64(base+1) })
			if err != nil {
				t.Fatal(err)
			}
			v, err := m.Decode(s.Layout, raw)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := v.Tensor(s.DstField)
			opv, _ := m.OpValue(tt.op)
			if !ok || d.Ne != tt.dst.Ne || d.Data != 0x1000*uint64(len(tt.srcs)+1) || d.Op != opv {
				t.Errorf("dst field %s = %+v", s.DstField, d)
			}
			for k, want := range tt.scalars {
				got := float64(v.Float(k))
				if _, isInt := v.Ints[k]; isInt {
					got = float64(v.Int(k))
				}
				if got != want {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
		})
	}
}

// TestMoreRulesCatalog runs the rows through the catalog's own graph
// builder (param names and source order of reference/case-format.md).
func TestFamilyRulesCatalog(t *testing.T) {
	for _, op := range []string{"sqr", "mean", "clamp", "concat", "pad", "mul_mat_id", "solve_tri"} {
		if _, ok := ops.Lookup(op); !ok {
			t.Skipf("op %s is not in the catalog yet", op)
		}
	}
	b := newGB(t).leaf("x", ops.F32, 32, 2).leaf("w", ops.Q4_0, 32, 16, 4).leaf("ids", ops.I32, 2, 2).
		leaf("a", ops.F32, 8, 8).leaf("bb", ops.F32, 16, 8).
		node("s", "sqr", []string{"x"}, nil).
		node("m", "mean", []string{"s"}, nil).
		node("c", "clamp", []string{"s"}, map[string]any{"min": -1.0, "max": 1.0}).
		node("cc", "concat", []string{"s", "c"}, map[string]any{"dim": 1}).
		node("p", "pad", []string{"cc"}, map[string]any{"lp": []int{0, 1, 0, 0}, "rp": []int{0, 1, 0, 0}}).
		node("xr", "reshape", []string{"x"}, map[string]any{"ne": []int{32, 1, 2}}).
		node("mi", "mul_mat_id", []string{"w", "xr", "ids"}, nil).
		node("st", "solve_tri", []string{"a", "bb"}, nil).
		outputs("m", "p", "mi", "st")
	p := b.build(true)
	want := map[string]string{"s": "sqr_f32", "m": "mean_f32", "c": "clamp_f32", "cc": "concat_f32", "p": "pad_f32",
		"mi": "mul_mat_id_Q4_0", "st": "solve_tri_f32"}
	for node, k := range want {
		if s := stepOf(t, p, node); s.Kind != StepLaunch || s.Kernel != k {
			t.Errorf("%s: %s %q, want %s (%q)", node, s.Kind, s.Kernel, k, s.Verdict.Reasons)
		}
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Kind != StepLaunch {
			continue
		}
		if _, err := p.Encode(s, func(base int) uint64 { return 0x4000 * uint64(base+1) }); err != nil {
			t.Errorf("step %d %s: %v", i, s.Kernel, err)
		}
	}
}

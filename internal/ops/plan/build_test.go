package plan

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestMulMatKernels(t *testing.T) {
	tests := []struct {
		name    string
		ta, tb  ops.Type
		k, m, n int64
		kernel  string
		layout  string
		batch   bool
	}{
		{"1 q4_0 N=53 matrix engine", ops.Q4_0, ops.F32, 64, 32, 53, "mul_mat_Q4_0_matrix_engine", "binary", false},
		{"2 q4_0 N=52", ops.Q4_0, ops.F32, 64, 32, 52, "mul_mat_Q4_0", "binary", true},
		{"2 q4_0 N=60 M=8", ops.Q4_0, ops.F32, 64, 8, 60, "mul_mat_Q4_0", "binary", true},
		{"3 q8_0", ops.Q8_0, ops.F32, 64, 32, 60, "mul_mat_Q8_0", "mm_q8", true},
		{"4 f16 aligned", ops.F16, ops.F16, 64, 32, 5, "mul_mat_f16_matrix_engine", "binary", true},
		{"5 f16 K=40", ops.F16, ops.F16, 40, 32, 5, "mul_mat_f16", "binary", true},
		{"5 f16 x f32 aligned", ops.F16, ops.F32, 64, 32, 5, "mul_mat_f16", "binary", true},
		{"6 f32 aligned", ops.F32, ops.F32, 64, 32, 5, "mul_mat_f32_matrix_engine", "binary", true},
		{"6 f32 aligned GEMV N=1", ops.F32, ops.F32, 64, 32, 1, "mul_mat_f32_matrix_engine", "binary", true},
		{"7 f32 M=24", ops.F32, ops.F32, 64, 24, 5, "mul_mat_f32", "binary", true},
		{"7 f32 x f16", ops.F32, ops.F16, 64, 32, 5, "mul_mat_f32", "binary", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newGB(t).leaf("a", tt.ta, tt.k, tt.m).leaf("b", tt.tb, tt.k, tt.n).
				node("y", "mul_mat", []string{"a", "b"}, nil)
			p := b.build(false)
			s := p.Steps[0]
			if s.Kind != StepLaunch {
				t.Fatalf("kind %s (%q)", s.Kind, s.Verdict.Reasons)
			}
			if s.Kernel != tt.kernel || s.Layout.Name != tt.layout || s.Batchable != tt.batch {
				t.Errorf("got %s/%s/batchable=%v, want %s/%s/%v", s.Kernel, s.Layout.Name, s.Batchable, tt.kernel, tt.layout, tt.batch)
			}
			want := map[string]int{"src0": b.value("a"), "src1": b.value("b"), "dst": b.value("y")}
			if !reflect.DeepEqual(s.Tensors, want) {
				t.Errorf("tensors %v, want %v (no bias unless fused)", s.Tensors, want)
			}
		})
	}
}

// llama builds x → rms_norm → mul(g) → mul_mat(w) → add(bias), the shape
// of a llama projection with both fusions available.
func llama(t *testing.T) *gb {
	return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 64).leaf("w", ops.Q8_0, 64, 32).leaf("bias", ops.F32, 32, 3).
		node("xn", "rms_norm", []string{"x"}, map[string]any{"eps": 1e-5}).
		node("xg", "mul", []string{"xn", "g"}, nil).
		node("q", "mul_mat", []string{"w", "xg"}, nil).
		node("qb", "add", []string{"q", "bias"}, nil)
}

func TestFusionApplied(t *testing.T) {
	b := llama(t)
	p := b.build(false)
	if len(p.Steps) != 2 {
		t.Fatalf("%d steps, want 2 fused launches: %+v", len(p.Steps), p.Steps)
	}
	rms, mm := p.Steps[0], p.Steps[1]
	if rms.Fusion != FusionRMSNormMul || rms.Kernel != "rms_norm_mul_f32" || rms.Layout.Name != "rms_norm_mul" ||
		!reflect.DeepEqual(rms.Nodes, []int{0, 1}) || !rms.Batchable {
		t.Errorf("rms step %+v", rms)
	}
	if want := map[string]int{"src0": b.value("x"), "src1": b.value("g"), "dst": b.value("xg")}; !reflect.DeepEqual(rms.Tensors, want) {
		t.Errorf("rms tensors %v, want %v", rms.Tensors, want)
	}
	if rms.Scalars.Float("eps") != float32(1e-5) {
		t.Errorf("eps %v", rms.Scalars.Float("eps"))
	}
	if mm.Fusion != FusionMulMatAdd || mm.Kernel != "mul_mat_Q8_0" || mm.Layout.Name != "mm_q8" || !reflect.DeepEqual(mm.Nodes, []int{2, 3}) {
		t.Errorf("mm step %+v", mm)
	}
	if want := map[string]int{"src0": b.value("w"), "src1": b.value("xg"), "dst": b.value("qb"), "bias": b.value("bias")}; !reflect.DeepEqual(mm.Tensors, want) {
		t.Errorf("mm tensors %v, want %v", mm.Tensors, want)
	}
}

func TestFusionOperandOrder(t *testing.T) {
	// The fused node's result may be either operand of the second node.
	b := newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 64, 3).leaf("w", ops.Q8_0, 64, 32).leaf("bias", ops.F32, 32, 3).
		node("xn", "rms_norm", []string{"x"}, nil).
		node("xg", "mul", []string{"g", "xn"}, nil).
		node("q", "mul_mat", []string{"w", "xg"}, nil).
		node("qb", "add", []string{"bias", "q"}, nil)
	p := b.build(false)
	if len(p.Steps) != 2 || p.Steps[0].Fusion == "" || p.Steps[1].Fusion == "" {
		t.Fatalf("steps %+v", p.Steps)
	}
	if p.Steps[0].Tensors["src1"] != b.value("g") || p.Steps[1].Tensors["bias"] != b.value("bias") {
		t.Errorf("weights/bias not the other operand: %v %v", p.Steps[0].Tensors, p.Steps[1].Tensors)
	}
}

func TestFusionNotApplied(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T) *gb
		first string // the first node of the candidate pair
		want  []string
	}{
		{"rms use count 2", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 64).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "g"}, nil).
				node("z", "scale", []string{"xn"}, nil).outputs("xg", "z")
		}, "xn", []string{"rms_norm+mul: xn is used 2 times (want exactly 1)"}},
		{"rms output flag", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 64).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "g"}, nil).outputs("xn", "xg")
		}, "xn", []string{"rms_norm+mul: xn is a graph output"}},
		{"rms shape mismatch", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("y", ops.F32, 64, 3, 2).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"y", "xn"}, nil)
		}, "xn", []string{"shapes differ (xn [64, 3, 1, 1], xg [64, 3, 2, 1])"}},
		{"rms f16 weights", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F16, 64).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "g"}, nil)
		}, "xn", []string{"weights type f16 is not f32", "xg is not supported by ggml-et"}},
		{"rms broadcast weights", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 1).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "g"}, nil)
		}, "xn", []string{"weights.ne0 % 16 != 0 (ne0 = 1)", "weights.ne0 != input.ne0 (weights.ne0 = 1, input.ne0 = 64)"}},
		{"rms input with row gaps", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 6).leaf("g", ops.F32, 64).
				node("xv", "view", []string{"x"}, map[string]any{"ne": []int{64, 3}, "nb": []int{512}}).
				node("xn", "rms_norm", []string{"xv"}, nil).node("xg", "mul", []string{"xn", "g"}, nil)
		}, "xn", []string{"norm input is not contiguous"}},
		{"rms strided weights", func(t *testing.T) *gb {
			return newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 3, 64).
				node("gt", "transpose", []string{"g"}, nil).
				node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "gt"}, nil)
		}, "xn", []string{"weights rows are not contiguous (nb0 = 12)"}},
		{"mm f32 weights", func(t *testing.T) *gb {
			return newGB(t).leaf("w", ops.F32, 64, 32).leaf("x", ops.F32, 64, 3).leaf("bias", ops.F32, 32, 3).
				node("q", "mul_mat", []string{"w", "x"}, nil).node("qb", "add", []string{"q", "bias"}, nil)
		}, "q", []string{"mul_mat+add: mul_mat src0 type f32 is not q8_0"}},
		{"mm broadcast bias", func(t *testing.T) *gb {
			return newGB(t).leaf("w", ops.Q8_0, 64, 32).leaf("x", ops.F32, 64, 3).leaf("bias", ops.F32, 32).
				node("q", "mul_mat", []string{"w", "x"}, nil).node("qb", "add", []string{"q", "bias"}, nil)
		}, "q", []string{"bias shape != mul_mat shape (bias [32, 1, 1, 1], mul_mat [32, 3, 1, 1])"}},
		{"mm use count 2", func(t *testing.T) *gb {
			return newGB(t).leaf("w", ops.Q8_0, 64, 32).leaf("x", ops.F32, 64, 3).leaf("bias", ops.F32, 32, 3).
				node("q", "mul_mat", []string{"w", "x"}, nil).node("qb", "add", []string{"q", "bias"}, nil).
				node("z", "scale", []string{"q"}, nil).outputs("qb", "z")
		}, "q", []string{"q is used 2 times"}},
		{"mm output", func(t *testing.T) *gb {
			return newGB(t).leaf("w", ops.Q8_0, 64, 32).leaf("x", ops.F32, 64, 3).leaf("bias", ops.F32, 32, 3).
				node("q", "mul_mat", []string{"w", "x"}, nil).node("qb", "add", []string{"q", "bias"}, nil).outputs("q", "qb")
		}, "q", []string{"q is a graph output"}},
		{"mm strided bias", func(t *testing.T) *gb {
			return newGB(t).leaf("w", ops.Q8_0, 64, 32).leaf("x", ops.F32, 64, 3).leaf("bias", ops.F32, 3, 32).
				node("bt", "transpose", []string{"bias"}, nil).
				node("q", "mul_mat", []string{"w", "x"}, nil).node("qb", "add", []string{"q", "bt"}, nil)
		}, "q", []string{"bias is not contiguous", "bias.nb != add.nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.build(t)
			p := b.build(false)
			for _, s := range p.Steps {
				if s.Fusion != "" {
					t.Fatalf("fused: %+v", s)
				}
			}
			s := stepOf(t, p, tt.first)
			hasTexts(t, s.FusionMissed, tt.want...)
			// The first node still runs on its own (or falls back).
			if len(s.Nodes) != 1 {
				t.Errorf("step nodes %v", s.Nodes)
			}
		})
	}
}

func TestFusionNeedsSupportedFirstNode(t *testing.T) {
	// rms_norm with ne0 % 16 != 0 is not supported: no fusion is tried and
	// both nodes run separately.
	b := newGB(t).leaf("x", ops.F32, 40, 3).leaf("g", ops.F32, 40).
		node("xn", "rms_norm", []string{"x"}, nil).node("xg", "mul", []string{"xn", "g"}, nil)
	p := b.build(false)
	if len(p.Steps) != 2 || p.Steps[0].Kind != StepFallback || p.Steps[1].Kind != StepLaunch || p.Steps[1].Kernel != "el_map_f32" {
		t.Fatalf("steps %+v", p.Steps)
	}
	hasReasons(t, p.Steps[0].Verdict.Reasons, "ne0 % 16 != 0 (ne0 = 40)")
}

func TestNoopAndViewSteps(t *testing.T) {
	b := newGB(t).leaf("x", ops.F32, 0, 4).node("y", "cpy", []string{"x"}, map[string]any{"type": "f16"}).
		leaf("z", ops.F32, 16, 2).node("zt", "transpose", []string{"z"}, nil).node("zc", "cont", []string{"zt"}, nil).
		outputs("y", "zc")
	p := b.build(true)
	kinds := []StepKind{}
	for _, s := range p.Steps {
		kinds = append(kinds, s.Kind)
	}
	if want := []StepKind{StepNoop, StepView, StepLaunch}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if p.Steps[0].Note == "" || !strings.Contains(p.Steps[0].Note, "0 elements") {
		t.Errorf("noop note %q", p.Steps[0].Note)
	}
	if got := p.Segments(); !reflect.DeepEqual(got, [][]int{{2}}) {
		t.Errorf("segments %v (cont_f32 is not batchable)", got)
	}
}

// set_rows writes into its first source, as ggml's result is
// ggml_view_tensor(a): the dst field's value is a view of d's memory.
func TestSetRowsInPlace(t *testing.T) {
	b := newGB(t).leaf("d", ops.F32, 32, 8).leaf("s", ops.F32, 32, 3).leaf("i", ops.I64, 3).
		node("y", "set_rows", []string{"d", "s", "i"}, nil)
	p := b.build(false)
	s := p.Steps[0]
	want := map[string]int{"src0": b.value("s"), "src1": b.value("i"), "dst": b.value("y")}
	if !reflect.DeepEqual(s.Tensors, want) || !s.Batchable {
		t.Errorf("step %+v, want tensors %v", s, want)
	}
	g := p.Graph
	y := &g.Values[b.value("y")]
	if y.Base != b.value("d") || y.T.Offs != 0 || !g.Nodes[0].InPlace {
		t.Errorf("y base %d offs %d in place %v, want a view of d (%d)", y.Base, y.T.Offs, g.Nodes[0].InPlace, b.value("d"))
	}
}

func TestSegments(t *testing.T) {
	// rms_norm (batchable), unary_f32 (not), two scales (batchable),
	// get_rows_f32 (not), mul_mat_Q4_0_matrix_engine at N = 53 (not), two
	// norms (batchable), a view, a fallback (flushes) and a soft_max.
	b := newGB(t).leaf("x", ops.F32, 64, 53).leaf("w", ops.Q4_0, 64, 32).leaf("d", ops.F32, 64, 8).leaf("r", ops.I32, 4).
		node("a", "rms_norm", []string{"x"}, nil).
		node("b", "unary", []string{"a"}, map[string]any{"op": "silu"}).
		node("c", "scale", []string{"b"}, nil).
		node("e", "scale", []string{"c"}, nil).
		node("f", "get_rows", []string{"d", "r"}, nil).
		node("g", "mul_mat", []string{"w", "e"}, nil).
		node("h", "rms_norm", []string{"g"}, nil).
		node("k", "norm", []string{"h"}, nil).
		node("kv", "view", []string{"k"}, map[string]any{"ne": []int{30, 53}, "nb": []int{128}}).
		node("l", "scale", []string{"kv"}, nil). // fallback: not contiguous
		node("m", "soft_max", []string{"k"}, nil).
		outputs("f", "l", "m")
	kernels := []string{}
	p := b.build(true)
	for _, s := range p.Steps {
		kernels = append(kernels, s.Kind.String()+":"+s.Kernel)
	}
	wantK := []string{"launch:rms_norm_f32", "launch:unary_f32", "launch:scale_f32", "launch:scale_f32", "launch:get_rows_f32",
		"launch:mul_mat_Q4_0_matrix_engine", "launch:rms_norm_f32", "launch:norm_f32", "view:", "fallback:", "launch:softmax_f32"}
	if !reflect.DeepEqual(kernels, wantK) {
		t.Fatalf("steps %q\nwant  %q", kernels, wantK)
	}
	if got, want := p.Segments(), [][]int{{0}, {1}, {2, 3}, {4}, {5}, {6, 7}, {10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("uberkernel segments %v, want %v", got, want)
	}
	p.Uberkernel = false
	if got, want := p.Segments(), [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("direct segments %v, want %v", got, want)
	}
	p2, err := Build(b.g, nil, Options{})
	if err != nil || p2.Uberkernel {
		t.Errorf("Options{} planned uberkernel=%v err=%v", p2.Uberkernel, err)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(nil, nil, Options{}); err == nil {
		t.Error("nil graph: no error")
	}
	// A manifest whose kernel map lacks unary_f32.
	y := string(abi.DefaultYAML())
	if !strings.Contains(y, "\n  unary_f32: unary\n") {
		t.Fatal("embedded manifest has no unary_f32 line")
	}
	m, err := abi.Parse("test.yaml", []byte(strings.Replace(y, "\n  unary_f32: unary\n", "\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b := newGB(t).leaf("x", ops.F32, 16).node("y", "unary", []string{"x"}, map[string]any{"op": "silu"})
	b.outputs()
	_, err = Build(b.g, m, Options{})
	if err == nil || !strings.Contains(err.Error(), "node y: kernel unary_f32 has no params layout") {
		t.Errorf("err = %v", err)
	}
}

// TestEncodeRoundTrip encodes every launch of a graph with views, optional
// tensors and scalars, decodes it as the kernel would and checks each
// field against the graph.
func TestEncodeRoundTrip(t *testing.T) {
	b := newGB(t).
		leaf("x", ops.F32, 64, 2, 6).leaf("pos", ops.I32, 3).leaf("ff", ops.F32, 32).
		leaf("g", ops.F32, 64).leaf("w", ops.Q8_0, 64, 32).leaf("m", ops.F32, 32, 6).
		leaf("xi", ops.F32, 64, 2, 6).leaf("pi", ops.I32, 24).
		leaf("fq", ops.F32, 64, 4, 4).leaf("fk", ops.F16, 64, 32, 2).leaf("fv", ops.F16, 64, 32, 2).leaf("fm", ops.F16, 32, 4).
		node("xv", "view", []string{"x"}, map[string]any{"ne": []int{64, 2, 3}, "offset": 1536}).
		node("xc", "cont", []string{"xv"}, nil).
		node("r", "rope", []string{"xc", "pos", "ff"}, map[string]any{"n_dims": 64, "mode": "neox", "freq_base": 500000.0, "n_ctx_orig": 8192, "sections": []int{4, 4, 4, 4}}).
		node("ri", "rope", []string{"xi", "pi"}, map[string]any{"n_dims": 32, "mode": "imrope", "sections": []int{4, 6, 6, 0}}).
		node("r2", "reshape", []string{"r"}, map[string]any{"ne": []int{64, 6}}).
		node("n", "rms_norm", []string{"r2"}, map[string]any{"eps": 1e-5}).
		node("ng", "mul", []string{"n", "g"}, nil).
		node("q", "mul_mat", []string{"w", "ng"}, nil).
		node("s", "soft_max", []string{"q", "m"}, map[string]any{"scale": 0.125, "max_bias": 0.5}).
		node("u", "unary", []string{"s"}, map[string]any{"op": "silu"}).
		node("gl", "glu", []string{"u"}, map[string]any{"op": "swiglu", "swapped": true}).
		node("go", "glu", []string{"u", "s"}, map[string]any{"op": "swiglu_oai", "alpha": 1.5, "limit": 6.0}).
		node("sc", "scale", []string{"go"}, map[string]any{"scale": 3.0, "bias": 0.25}).
		node("fa", "flash_attn_ext", []string{"fq", "fk", "fv", "fm"}, map[string]any{"scale": 0.125}).
		outputs("ri", "gl", "sc", "fa")
	p := b.build(true)
	m := abi.Default()
	addr := func(base int) uint64 { return 0x80_0000_0000 + uint64(base)*0x10_0000 }
	launches := 0
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Kind != StepLaunch {
			continue
		}
		launches++
		raw, err := p.Encode(s, addr)
		if err != nil {
			t.Fatalf("step %d %s: encode: %v", i, s.Kernel, err)
		}
		if len(raw) != s.Layout.Size {
			t.Fatalf("step %d: %d bytes, want %d", i, len(raw), s.Layout.Size)
		}
		got, err := m.Decode(s.Layout, raw)
		if err != nil {
			t.Fatalf("step %d %s: decode: %v", i, s.Kernel, err)
		}
		last := p.Graph.Nodes[s.Nodes[len(s.Nodes)-1]]
		opv, _ := m.OpValue(string(last.Op))
		for _, f := range s.Layout.Fields {
			if f.Kind != abi.KindTensor {
				continue
			}
			vi, want := s.Tensors[f.Name]
			d, have := got.Tensor(f.Name)
			if have != want {
				t.Errorf("step %d %s: field %s present=%v, want %v", i, s.Kernel, f.Name, have, want)
				continue
			}
			if !want {
				continue
			}
			val := p.Graph.Values[vi]
			if d.Data != addr(val.Base)+val.T.Offs || d.Type != val.T.Type || d.Ne != val.T.Ne || d.Nb != val.T.Nb {
				t.Errorf("step %d %s: field %s = %+v, want value %s at %#x", i, s.Kernel, f.Name, d, val.Name, addr(val.Base)+val.T.Offs)
			}
			wantOp, wantParams := int32(0), [abi.NumOpParams]int32{}
			if f.Name == s.DstField {
				wantOp, wantParams = opv, s.OpParams
			}
			if d.Op != wantOp || d.OpParams != wantParams {
				t.Errorf("step %d %s: field %s op %d %v, want %d %v", i, s.Kernel, f.Name, d.Op, d.OpParams, wantOp, wantParams)
			}
		}
		for k, v := range s.Scalars.Ints {
			if got.Int(k) != v {
				t.Errorf("step %d %s: %s = %d, want %d", i, s.Kernel, k, got.Int(k), v)
			}
		}
		for k, v := range s.Scalars.Floats {
			if got.Float(k) != v {
				t.Errorf("step %d %s: %s = %v, want %v", i, s.Kernel, k, got.Float(k), v)
			}
		}
		// Encoding is deterministic.
		again, _ := p.Encode(s, addr)
		if !bytes.Equal(raw, again) {
			t.Errorf("step %d: encoding differs between calls", i)
		}
	}
	if launches != 11 {
		t.Errorf("%d launches, want 11", launches)
	}

	// Spot checks of scalar binding.
	check := func(node, field string, want any) {
		t.Helper()
		s := stepOf(t, p, node)
		var got any
		if _, ok := want.(float32); ok {
			got = s.Scalars.Float(field)
		} else {
			got = s.Scalars.Int(field)
		}
		if got != want {
			t.Errorf("%s.%s = %v, want %v", node, field, got, want)
		}
	}
	neox, _ := m.RopeMode("neox")
	imrope, _ := m.RopeMode("imrope")
	silu, _ := m.UnaryValue("silu")
	swiglu, _ := m.GLUValue("swiglu")
	oai, _ := m.GLUValue("swiglu_oai")
	check("r", "mode", int64(neox))
	check("r", "n_dims", int64(64))
	check("r", "n_ctx_orig", int64(8192))
	check("r", "n_past", int64(0))
	check("r", "freq_base", float32(500000))
	check("r", "freq_scale", float32(1))
	check("r", "beta_fast", float32(32))
	check("r", "sections[0]", int64(0)) // sections only with the MROPE bit
	check("ri", "mode", int64(imrope))
	check("ri", "sections[0]", int64(4))
	check("ri", "sections[2]", int64(6))
	check("n", "eps", float32(1e-5)) // fused rms_norm+mul
	check("s", "scale", float32(0.125))
	check("s", "max_bias", float32(0.5))
	check("u", "unary_op", int64(silu))
	check("gl", "glu_op_type", int64(swiglu))
	check("gl", "swapped", int64(1))
	check("gl", "alpha", float32(0)) // alpha and limit only for swiglu_oai
	check("gl", "limit", float32(0))
	check("go", "glu_op_type", int64(oai))
	check("go", "alpha", float32(1.5))
	check("go", "limit", float32(6))
	check("sc", "scale", float32(3))
	check("sc", "bias", float32(0.25))
	check("fa", "scale", float32(0.125))
	check("fa", "has_mask", int64(1))

	if s := stepOf(t, p, "r"); s.Tensors["src2"] != b.value("ff") {
		t.Errorf("rope freq factors %v", s.Tensors)
	}
	if s := stepOf(t, p, "gl"); hasKey(s.Tensors, "src1") {
		t.Errorf("single-tensor glu passes src1: %v", s.Tensors)
	}
	if s := stepOf(t, p, "q"); s.Kernel != "mul_mat_Q8_0" || hasKey(s.Tensors, "bias") {
		t.Errorf("unfused q8_0 mul_mat: %s %v", s.Kernel, s.Tensors)
	}
	if s := stepOf(t, p, "r"); s.OpParams[2] != neox || s.OpParams[15] != 0 {
		t.Errorf("rope op_params %v", s.OpParams)
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

func TestExplain(t *testing.T) {
	b := newGB(t).leaf("x", ops.F32, 64, 3).leaf("g", ops.F32, 64).leaf("w", ops.Q4_K, 256, 16).leaf("y", ops.F32, 256, 3).
		node("xn", "rms_norm", []string{"x"}, nil).
		node("xg", "mul", []string{"xn", "g"}, nil).
		node("xt", "transpose", []string{"xg"}, nil).
		node("q", "mul_mat", []string{"w", "y"}, nil).
		node("z", "scale", []string{"xg"}, nil).
		outputs("xt", "q", "z")
	p := b.build(true)
	rows := p.Explain()
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	type brief struct {
		Node, Op, Kind, Fusion, FusedWith, Kernel string
		Step, Bytes                               int
		Supported, Batchable                      bool
		UK                                        uint16
	}
	var got []brief
	for _, r := range rows {
		got = append(got, brief{r.Node, r.Op, r.Kind.String(), r.Fusion, r.FusedWith, r.Kernel, r.Step, r.ParamsBytes, r.Supported, r.Batchable, r.UberkernelID})
	}
	want := []brief{
		{"xn", "rms_norm", "launch", "rms_norm+mul", "xg", "rms_norm_mul_f32", 0, 1016, true, true, 25},
		{"xg", "mul", "launch", "rms_norm+mul", "xn", "rms_norm_mul_f32", 0, 1016, true, true, 25},
		{"xt", "transpose", "view", "", "", "", 1, 0, true, false, 0},
		{"q", "mul_mat", "fallback", "", "", "", 2, 0, false, false, 0},
		{"z", "scale", "launch", "", "", "scale_f32", 3, 680, true, true, 29},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("explain\n got %+v\nwant %+v", got, want)
	}
	hasReasons(t, rows[3].Reasons, "src0 type q4_K not in {f32, f16, q8_0, q4_0}")
}

// TestMaskSinksFields: soft_max's sinks go to src2 (and flash_attn_ext's
// mask to mask) whether or not the node has a mask; the sinks param says
// which one a lone optional source is.
func TestMaskSinksFields(t *testing.T) {
	b := newGB(t).
		leaf("x", ops.F32, 32, 4, 2).leaf("m", ops.F32, 32, 4).leaf("s", ops.F32, 2).
		node("only_sinks", "soft_max", []string{"x", "s"}, map[string]any{"sinks": true}).
		node("only_mask", "soft_max", []string{"x", "m"}, nil).
		node("both", "soft_max", []string{"x", "m", "s"}, nil).
		leaf("q", ops.F32, 64, 3, 2).leaf("k", ops.F16, 64, 16, 2).leaf("v", ops.F16, 64, 16, 2).
		leaf("fm", ops.F16, 16, 3).leaf("fs", ops.F32, 2).
		node("fa_mask", "flash_attn_ext", []string{"q", "k", "v", "fm"}, map[string]any{"scale": 0.125}).
		node("fa_sinks", "flash_attn_ext", []string{"q", "k", "v", "fs"}, map[string]any{"scale": 0.125, "sinks": true}).
		outputs("only_sinks", "only_mask", "both", "fa_mask", "fa_sinks")
	p := b.build(false)
	for _, tc := range []struct {
		node string
		want map[string]string
	}{
		{"only_sinks", map[string]string{"src0": "x", "src2": "s"}},
		{"only_mask", map[string]string{"src0": "x", "src1": "m"}},
		{"both", map[string]string{"src0": "x", "src1": "m", "src2": "s"}},
		{"fa_mask", map[string]string{"q": "q", "k": "k", "v": "v", "mask": "fm"}},
	} {
		s := stepOf(t, p, tc.node)
		if len(s.Tensors) != len(tc.want)+1 {
			t.Errorf("%s: fields %v, want %v and dst", tc.node, s.Tensors, tc.want)
		}
		for f, v := range tc.want {
			if s.Tensors[f] != b.value(v) {
				t.Errorf("%s: field %s is value %d, want %s", tc.node, f, s.Tensors[f], v)
			}
		}
	}
	// ggml-et has no flash attention with sinks: a fallback, with the reason.
	v := p.Verdicts[b.nodeIndex("fa_sinks")]
	if v.Supported || !strings.Contains(fmt.Sprint(v.Reasons), "sinks") {
		t.Errorf("fa with sinks: supported %v, reasons %q", v.Supported, v.Reasons)
	}
	if mi, si := ops.MaskSinks(3, 4, p.Graph.Nodes[b.nodeIndex("fa_sinks")].Params); mi != -1 || si != 3 {
		t.Errorf("MaskSinks = %d, %d, want -1, 3", mi, si)
	}
}

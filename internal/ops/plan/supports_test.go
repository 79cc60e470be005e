package plan

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

type supportCase struct {
	name  string
	build func(b *gb)
	// ok is the expected verdict of the last node; reasons are substrings
	// that must each occur in some reason (ok false).
	ok      bool
	reasons []string
	// kernel, when set, is the kernel of the last node's launch.
	kernel string
}

func runSupportCases(t *testing.T, cases []supportCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newGB(t)
			tc.build(b)
			last := len(b.g.Nodes) - 1
			v := Supports(b.g, last, abi.Default())
			if v.Supported != tc.ok {
				t.Fatalf("Supported = %v, want %v (reasons %q)", v.Supported, tc.ok, v.Reasons)
			}
			if tc.ok && len(v.Reasons) > 0 {
				t.Errorf("supported with reasons %q", v.Reasons)
			}
			if !tc.ok {
				if len(v.Reasons) == 0 {
					t.Fatal("unsupported without a reason")
				}
				hasReasons(t, v.Reasons, tc.reasons...)
			}
			p := b.build(false)
			s := stepOf(t, p, b.g.Nodes[last].Name)
			if !tc.ok {
				if s.Kind != StepFallback {
					t.Errorf("step kind %s, want fallback", s.Kind)
				}
				if strings.Join(Texts(s.Verdict.Reasons), "|") != strings.Join(Texts(v.Reasons), "|") {
					t.Errorf("step reasons %q != Supports reasons %q", s.Verdict.Reasons, v.Reasons)
				}
				return
			}
			if tc.kernel != "" && s.Kernel != tc.kernel {
				t.Errorf("kernel %q, want %q", s.Kernel, tc.kernel)
			}
		})
	}
}

func TestSupportsMulMat(t *testing.T) {
	mm := func(ta, tb ops.Type, k, m, n int64) func(b *gb) {
		return func(b *gb) {
			b.leaf("a", ta, k, m).leaf("b", tb, k, n).node("y", "mul_mat", []string{"a", "b"}, nil)
		}
	}
	runSupportCases(t, []supportCase{
		{name: "A f32 aligned", build: mm(ops.F32, ops.F32, 64, 32, 4), ok: true},
		{name: "B f32 unaligned", build: mm(ops.F32, ops.F32, 100, 7, 3), ok: true},
		{name: "B f16xf32", build: mm(ops.F16, ops.F32, 100, 7, 3), ok: true},
		{name: "B f32xf16", build: mm(ops.F32, ops.F16, 64, 32, 3), ok: true},
		{name: "C q8_0", build: mm(ops.Q8_0, ops.F32, 64, 7, 3), ok: true},
		{name: "D q4_0", build: mm(ops.Q4_0, ops.F32, 64, 7, 3), ok: true},
		{name: "q4_K unsupported", build: mm(ops.Q4_K, ops.F32, 256, 16, 3),
			reasons: []string{"src0 type q4_K not in {f32, f16, q8_0, q4_0}"}},
		{name: "q8_0 x f16", build: mm(ops.Q8_0, ops.F16, 64, 16, 3),
			reasons: []string{"src1 type f16 is not f32 (q8_0 weights need f32 activations)"}},
		{name: "q4_0 x f16", build: mm(ops.Q4_0, ops.F16, 64, 16, 3),
			reasons: []string{"src1 type f16 is not f32"}},
		{name: "transposed src0", build: func(b *gb) {
			b.leaf("w", ops.F32, 32, 64).node("wt", "transpose", []string{"w"}, nil).
				leaf("b", ops.F32, 64, 3).node("y", "mul_mat", []string{"wt", "b"}, nil)
		}, reasons: []string{"src0.nb0 != type size (nb0 = 128, type size = 4)"}},
		{name: "transposed src1", build: func(b *gb) {
			b.leaf("a", ops.F16, 16, 32).leaf("x", ops.F16, 3, 16).node("xt", "transpose", []string{"x"}, nil).
				node("y", "mul_mat", []string{"a", "xt"}, nil)
		}, reasons: []string{"src1.nb0 != type size (nb0 = 6, type size = 2)"}},
		{name: "permuted src1 with element nb0 is case B on the matrix engine", build: func(b *gb) {
			b.leaf("a", ops.F32, 64, 16).leaf("x", ops.F32, 64, 4, 3).
				node("xp", "permute", []string{"x"}, map[string]any{"axes": []int{0, 2, 1, 3}}).
				node("y", "mul_mat", []string{"a", "xp"}, nil)
		}, ok: true, kernel: "mul_mat_f32_matrix_engine"},
	})
}

func TestSupportsElementwise(t *testing.T) {
	bin := func(op string, ta, tb ops.Type, nea, neb []int64) func(b *gb) {
		return func(b *gb) {
			b.leaf("a", ta, nea...).leaf("b", tb, neb...).node("y", op, []string{"a", "b"}, nil)
		}
	}
	runSupportCases(t, []supportCase{
		{name: "add", build: bin("add", ops.F32, ops.F32, []int64{20, 3}, []int64{20, 3}), ok: true, kernel: "el_map_f32"},
		{name: "sub broadcast rows", build: bin("sub", ops.F32, ops.F32, []int64{20, 3}, []int64{20}), ok: true, kernel: "el_map_f32"},
		{name: "mul scalar broadcast", build: bin("mul", ops.F32, ops.F32, []int64{20, 3}, []int64{1}), ok: true, kernel: "el_map_f32"},
		{name: "add f16", build: bin("add", ops.F16, ops.F32, []int64{16}, []int64{16}),
			reasons: []string{"src0 type f16 is not f32", "dst type f16 is not f32"}},
		{name: "mul f16 src1", build: bin("mul", ops.F32, ops.F16, []int64{16}, []int64{16}),
			reasons: []string{"src1 type f16 is not f32"}},
		{name: "mul strided src1", build: func(b *gb) {
			b.leaf("a", ops.F32, 16, 16).leaf("x", ops.F32, 16, 16).node("xt", "transpose", []string{"x"}, nil).
				node("y", "mul", []string{"a", "xt"}, nil)
		}, reasons: []string{"src1.nb0 != 4 and src1.ne0 != 1 (nb0 = 64, ne0 = 16)"}},
		{name: "sub strided src0", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 16).node("xt", "transpose", []string{"x"}, nil).leaf("b", ops.F32, 16).
				node("y", "sub", []string{"xt", "b"}, nil)
		}, reasons: []string{"src0.nb0 != 4 (nb0 = 64)"}},
	})
}

func TestSupportsNormScaleSoftmax(t *testing.T) {
	norm := func(op string, ne ...int64) func(b *gb) {
		return func(b *gb) {
			b.leaf("x", ops.F32, ne...).node("y", op, []string{"x"}, map[string]any{"eps": 1e-5})
		}
	}
	runSupportCases(t, []supportCase{
		{name: "rms_norm", build: norm("rms_norm", 64, 3), ok: true, kernel: "rms_norm_f32"},
		{name: "norm", build: norm("norm", 64, 3), ok: true, kernel: "norm_f32"},
		{name: "l2_norm", build: norm("l2_norm", 64, 3), ok: true, kernel: "l2_norm_f32"},
		{name: "rms_norm ne0 100", build: norm("rms_norm", 100, 3), reasons: []string{"ne0 % 16 != 0 (ne0 = 100)"}},
		{name: "l2_norm ne0 40", build: norm("l2_norm", 40), reasons: []string{"ne0 % 16 != 0 (ne0 = 40)"}},
		{name: "rms_norm row gaps are fine", build: func(b *gb) {
			b.leaf("x", ops.F32, 64, 6).node("xv", "view", []string{"x"}, map[string]any{"ne": []int{64, 3}, "nb": []int{512}}).
				node("y", "rms_norm", []string{"xv"}, nil)
		}, ok: true},
		{name: "norm transposed", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 32).node("xt", "transpose", []string{"x"}, nil).node("y", "norm", []string{"xt"}, nil)
		}, reasons: []string{"src0.nb0 != 4 (nb0 = 64)"}},
		{name: "scale", build: func(b *gb) {
			b.leaf("x", ops.F32, 8, 2).node("y", "scale", []string{"x"}, map[string]any{"scale": 2.0})
		}, ok: true, kernel: "scale_f32"},
		{name: "scale nelements", build: func(b *gb) {
			b.leaf("x", ops.F32, 10, 10).node("y", "scale", []string{"x"}, map[string]any{"scale": 2.0})
		}, reasons: []string{"nelements % 16 != 0 (nelements = 100)"}},
		{name: "scale view with gaps", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 4).node("xv", "view", []string{"x"}, map[string]any{"ne": []int{16, 2}, "nb": []int{128}}).
				node("y", "scale", []string{"xv"}, nil)
		}, reasons: []string{"src0 is not contiguous (ne = [16, 2, 1, 1], nb = [4, 128, "}},
		{name: "soft_max mask sinks", build: func(b *gb) {
			b.leaf("x", ops.F32, 32, 4, 2).leaf("m", ops.F32, 32, 4).leaf("s", ops.F32, 2).
				node("y", "soft_max", []string{"x", "m", "s"}, map[string]any{"scale": 0.125, "max_bias": 8.0})
		}, ok: true, kernel: "softmax_f32"},
		{name: "soft_max ne0 1", build: func(b *gb) {
			b.leaf("x", ops.F32, 1, 16).node("y", "soft_max", []string{"x"}, nil)
		}, reasons: []string{"src0.ne0 <= 1 (ne0 = 1)"}},
		{name: "soft_max f16 mask", build: func(b *gb) {
			b.leaf("x", ops.F32, 32, 4).leaf("m", ops.F16, 32, 4).node("y", "soft_max", []string{"x", "m"}, nil)
		}, reasons: []string{"mask type f16 is not f32"}},
		{name: "soft_max strided src0", build: func(b *gb) {
			b.leaf("x", ops.F32, 32, 8).node("xv", "view", []string{"x"}, map[string]any{"ne": []int{32, 4}, "nb": []int{256}}).
				node("y", "soft_max", []string{"xv"}, nil)
		}, reasons: []string{"src0 is not contiguous"}},
	})
}

func TestSupportsRope(t *testing.T) {
	rope := func(typ ops.Type, ne0 int64, params map[string]any) func(b *gb) {
		return func(b *gb) {
			ntok := int64(3)
			npos := ntok
			if m := params["mode"]; m == "imrope" || m == "mrope" || m == "vision" {
				npos = 4 * ntok
			}
			b.leaf("x", typ, ne0, 2, ntok).leaf("pos", ops.I32, npos).node("y", "rope", []string{"x", "pos"}, params)
		}
	}
	runSupportCases(t, []supportCase{
		{name: "normal", build: rope(ops.F32, 24, map[string]any{"n_dims": 24}), ok: true, kernel: "rope_f32"},
		{name: "neox", build: rope(ops.F32, 64, map[string]any{"n_dims": 32, "mode": "neox"}), ok: true},
		{name: "imrope", build: rope(ops.F32, 64, map[string]any{"n_dims": 64, "mode": "imrope", "sections": []int{8, 12, 12, 0}}), ok: true},
		{name: "neox n_dims 8", build: rope(ops.F32, 64, map[string]any{"n_dims": 8, "mode": "neox"}),
			reasons: []string{"n_dims % 16 != 0 (n_dims = 8)"}},
		{name: "imrope sections zero", build: rope(ops.F32, 64, map[string]any{"n_dims": 64, "mode": "imrope", "sections": []int{0, 0, 0, 4}}),
			reasons: []string{"imrope sections[0..2] are all zero (sections = [0 0 0 4])"}},
		{name: "mrope", build: rope(ops.F32, 64, map[string]any{"n_dims": 48, "mode": "mrope", "sections": []int{16, 16, 16, 0}}),
			reasons: []string{"rope mode mrope not in {normal, neox, imrope}"}},
		{name: "vision", build: rope(ops.F32, 64, map[string]any{"n_dims": 32, "mode": "vision", "sections": []int{16, 16, 0, 0}}),
			reasons: []string{"rope mode vision not in {normal, neox, imrope}"}},
		{name: "n_offs", build: rope(ops.F32, 64, map[string]any{"n_dims": 32, "n_offs": 2}),
			reasons: []string{"op_params[15] != 0 (rope offset = 2)"}},
		{name: "n_dims 1024", build: rope(ops.F32, 1024, map[string]any{"n_dims": 1024}),
			reasons: []string{"n_dims > 512 (n_dims = 1024)"}},
		{name: "f16 x", build: rope(ops.F16, 64, map[string]any{"n_dims": 64}),
			reasons: []string{"src0 type f16 is not f32", "dst type f16 is not f32"}},
		{name: "view offset", build: func(b *gb) {
			b.leaf("x", ops.F32, 64, 2, 6).
				node("xv", "view", []string{"x"}, map[string]any{"ne": []int{64, 2, 3}, "offset": 1536}).
				leaf("pos", ops.I32, 3).node("y", "rope", []string{"xv", "pos"}, map[string]any{"n_dims": 64})
		}, reasons: []string{"src0.view_offs != 0 (view_offs = 1536)"}},
	})
}

func TestSupportsGLUUnary(t *testing.T) {
	runSupportCases(t, []supportCase{
		{name: "swiglu fused", build: func(b *gb) {
			b.leaf("x", ops.F32, 64, 4).node("y", "glu", []string{"x"}, map[string]any{"op": "swiglu"})
		}, ok: true, kernel: "glu_f32"},
		{name: "swiglu_oai split", build: func(b *gb) {
			b.leaf("a", ops.F32, 32, 4).leaf("g", ops.F32, 32, 4).
				node("y", "glu", []string{"a", "g"}, map[string]any{"op": "swiglu_oai", "alpha": 1.5, "limit": 6.0})
		}, ok: true},
		{name: "glu nelements", build: func(b *gb) {
			b.leaf("x", ops.F32, 36).node("y", "glu", []string{"x"}, map[string]any{"op": "geglu"})
		}, reasons: []string{"nelements % 16 != 0 (nelements = 18)"}},
		{name: "glu f16", build: func(b *gb) {
			b.leaf("x", ops.F16, 64).node("y", "glu", []string{"x"}, map[string]any{"op": "reglu"})
		}, reasons: []string{"src0 type f16 is not f32"}},
		{name: "glu split src1 transposed", build: func(b *gb) {
			b.leaf("a", ops.F32, 16, 16).leaf("g", ops.F32, 16, 16).node("gt", "transpose", []string{"g"}, nil).
				node("y", "glu", []string{"a", "gt"}, map[string]any{"op": "swiglu"})
		}, reasons: []string{"src1 rows are not contiguous"}},
		{name: "unary silu", build: func(b *gb) {
			b.leaf("x", ops.F32, 32, 3).node("y", "unary", []string{"x"}, map[string]any{"op": "silu"})
		}, ok: true, kernel: "unary_f32"},
		{name: "unary strided higher dims ok", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 4).node("xv", "view", []string{"x"}, map[string]any{"ne": []int{16, 2}, "nb": []int{128}}).
				node("y", "unary", []string{"xv"}, map[string]any{"op": "neg"})
		}, ok: true},
		{name: "unary nelements", build: func(b *gb) {
			b.leaf("x", ops.F32, 10, 3).node("y", "unary", []string{"x"}, map[string]any{"op": "relu"})
		}, reasons: []string{"nelements % 16 != 0 (nelements = 30)"}},
		{name: "unary transposed", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 16).node("xt", "transpose", []string{"x"}, nil).
				node("y", "unary", []string{"xt"}, map[string]any{"op": "exp"})
		}, reasons: []string{"src0.nb0 != 4 (nb0 = 64)"}},
		{name: "unary xielu", build: func(b *gb) {
			b.leaf("x", ops.F32, 16).node("y", "unary", []string{"x"}, map[string]any{"op": "abs"})
			b.g.Nodes[0].Params["op"] = "xielu" // not in the catalog: ggml-et rejects it anyway
		}, reasons: []string{"unary op xielu is not accepted by ggml-et"}},
	})
}

func TestSupportsUnaryAll21(t *testing.T) {
	if len(unaryAccepted) != 21 {
		t.Fatalf("%d accepted unary ops, want 21", len(unaryAccepted))
	}
	for _, op := range ops.UnaryOps {
		b := newGB(t).leaf("x", ops.F32, 16).node("y", "unary", []string{"x"}, map[string]any{"op": op})
		if v := Supports(b.g, 0, nil); !v.Supported {
			t.Errorf("unary %s: %q", op, v.Reasons)
		}
	}
}

func TestSupportsRowsCopies(t *testing.T) {
	runSupportCases(t, []supportCase{
		{name: "get_rows q4_K", build: func(b *gb) {
			b.leaf("d", ops.Q4_K, 256, 8).leaf("r", ops.I32, 3).node("y", "get_rows", []string{"d", "r"}, nil)
		}, ok: true, kernel: "get_rows_f32"},
		{name: "get_rows transposed data", build: func(b *gb) {
			b.leaf("d", ops.F32, 16, 16).node("dt", "transpose", []string{"d"}, nil).leaf("r", ops.I32, 3).
				node("y", "get_rows", []string{"dt", "r"}, nil)
		}, reasons: []string{"src0 is not contiguous"}},
		{name: "cpy f32 f16", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 2).node("y", "cpy", []string{"x"}, map[string]any{"type": "f16"})
		}, ok: true, kernel: "cpy_f32_f16"},
		{name: "cpy f32 f32 transposed", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 2).node("xt", "transpose", []string{"x"}, nil).
				node("y", "cpy", []string{"xt"}, map[string]any{"type": "f32"})
		}, ok: true, kernel: "cont_f32"},
		{name: "cpy f16 f16", build: func(b *gb) {
			b.leaf("x", ops.F16, 16, 2).node("y", "cpy", []string{"x"}, map[string]any{"type": "f16"})
		}, ok: true, kernel: "cont_f16"},
		{name: "cpy f32 q8_0", build: func(b *gb) {
			b.leaf("x", ops.F32, 32, 2).node("y", "cpy", []string{"x"}, map[string]any{"type": "q8_0"})
		}, reasons: []string{"cpy f32 -> q8_0 not in {f32 -> f32, f16 -> f16, f32 -> f16}"}},
		{name: "cpy f16 f32", build: func(b *gb) {
			b.leaf("x", ops.F16, 32, 2).node("y", "cpy", []string{"x"}, map[string]any{"type": "f32"})
		}, reasons: []string{"cpy f16 -> f32 not in"}},
		{name: "cont f32", build: func(b *gb) {
			b.leaf("x", ops.F32, 16, 2).node("xt", "transpose", []string{"x"}, nil).node("y", "cont", []string{"xt"}, nil)
		}, ok: true, kernel: "cont_f32"},
		{name: "cont f16", build: func(b *gb) {
			b.leaf("x", ops.F16, 16, 2).node("xt", "transpose", []string{"x"}, nil).node("y", "cont", []string{"xt"}, nil)
		}, ok: true, kernel: "cont_f16"},
		{name: "cont q8_0", build: func(b *gb) {
			b.leaf("x", ops.Q8_0, 32, 2).node("y", "cont", []string{"x"}, nil)
		}, reasons: []string{"src0 type q8_0 not in {f32, f16}"}},
		{name: "set_rows f16 dst", build: func(b *gb) {
			b.leaf("d", ops.F16, 32, 8).leaf("s", ops.F32, 32, 3).leaf("i", ops.I64, 3).
				node("y", "set_rows", []string{"d", "s", "i"}, nil)
		}, ok: true, kernel: "set_rows_f32"},
		{name: "set_rows i32 idx", build: func(b *gb) {
			b.leaf("d", ops.F32, 32, 8).leaf("s", ops.F32, 32, 3).leaf("i", ops.I32, 3).
				node("y", "set_rows", []string{"d", "s", "i"}, nil)
		}, reasons: []string{"src1 type i32 is not i64"}},
		{name: "set_rows q8_0 dst", build: func(b *gb) {
			b.leaf("d", ops.Q8_0, 32, 8).leaf("s", ops.F32, 32, 3).leaf("i", ops.I64, 3).
				node("y", "set_rows", []string{"d", "s", "i"}, nil)
		}, reasons: []string{"dst type q8_0 not in {f32, f16}"}},
	})
}

func TestSupportsFlashAttn(t *testing.T) {
	fa := func(dk int64, kt ops.Type, params map[string]any, mask bool) func(b *gb) {
		return func(b *gb) {
			b.leaf("q", ops.F32, dk, 4, 8).leaf("k", kt, dk, 32, 2).leaf("v", kt, dk, 32, 2)
			src := []string{"q", "k", "v"}
			if mask {
				b.leaf("m", ops.F16, 32, 4)
				src = append(src, "m")
			}
			if params == nil {
				params = map[string]any{}
			}
			params["scale"] = 0.125
			b.node("y", "flash_attn_ext", src, params)
		}
	}
	runSupportCases(t, []supportCase{
		{name: "f16 kv mask", build: fa(64, ops.F16, nil, true), ok: true, kernel: "flash_attn_ext_f16_me"},
		{name: "f16 kv no mask", build: fa(128, ops.F16, nil, false), ok: true, kernel: "flash_attn_ext_f16_me"},
		{name: "f32 kv", build: fa(64, ops.F32, nil, true),
			reasons: []string{"k type f32 is not f16 (ggml-et accepts only f16 K/V)", "v type f32 is not f16"}},
		{name: "dk 40", build: fa(40, ops.F16, nil, true), reasons: []string{"dk % 32 != 0 (dk = 40)"}},
		{name: "dk 576", build: fa(576, ops.F16, nil, false), reasons: []string{"dk > 512 (dk = 576)", "dv > 512 (dv = 576)"}},
		{name: "max_bias", build: fa(64, ops.F16, map[string]any{"max_bias": 8.0}, true), reasons: []string{"max_bias != 0 (max_bias = 8)"}},
		{name: "softcap", build: fa(64, ops.F16, map[string]any{"logit_softcap": 30.0}, true), reasons: []string{"logit_softcap != 0 (logit_softcap = 30)"}},
	})
}

func TestSupportsNotImplemented(t *testing.T) {
	tests := []struct{ op, want string }{
		{"pool_2d", "op pool_2d is not implemented by ggml-et"},
		{"div", "op div is not implemented by ggml-et"},
		{"xielu", "unary op xielu is not accepted by ggml-et"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			b := newGB(t).leaf("x", ops.F32, 16).node("y", "scale", []string{"x"}, nil)
			b.g.Nodes[0].Op = ops.Op(tt.op) // an op without a rule row
			v := Supports(b.g, 0, nil)
			if v.Supported {
				t.Fatal("supported")
			}
			hasReasons(t, v.Reasons, tt.want)
			p := b.build(false)
			if p.Steps[0].Kind != StepFallback {
				t.Errorf("kind %s, want fallback", p.Steps[0].Kind)
			}
		})
	}
}

func TestSupportsViewAndBadIndex(t *testing.T) {
	b := newGB(t).leaf("x", ops.F32, 16, 2).node("xt", "transpose", []string{"x"}, nil)
	if v := Supports(b.g, 0, nil); !v.Supported {
		t.Errorf("view: %q", v.Reasons)
	}
	if v := Supports(b.g, 5, nil); v.Supported || len(v.Reasons) == 0 {
		t.Errorf("bad index: %+v", v)
	}
}

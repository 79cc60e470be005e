package plan

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		op     ops.Op
		reason string
		want   string
	}{
		{ops.OpRMSNorm, "ne0 % 16 != 0 (ne0 = 100)", "pad ne0 to 112 (a multiple of 16)"},
		{ops.OpScale, "nelements % 16 != 0 (nelements = 30)", "pad so that the element count is a multiple of 16 (next: 32)"},
		{ops.OpFlashAttnExt, "dk % 32 != 0 (dk = 80)", "pad dk to 96 (a multiple of 32)"},
		{ops.OpRWKVWKV6, "head size (k.ne0) % 8 != 0 (head size (k.ne0) = 12)", "pad head size (k.ne0) to 16 (a multiple of 8)"},
		{ops.OpSet, "offset % 64 != 0 (offset = 12)", "align offset to 64 bytes (a multiple of 64)"},
		{ops.OpSet, "set is not in place (inplace = false; ggml-et runs only ggml_set_inplace)", "use ggml_set_inplace (inplace: true)"},
		{ops.OpMulMat, "src0 type q4_K not in {f32, f16, q8_0, q4_0}", "quantize src0 as q8_0 or q4_0"},
		{ops.OpMulMat, "src1 type f16 is not f32 (q8_0 weights need f32 activations)", "cpy src1 to f32"},
		{ops.OpMulMatID, "src0 type q4_K not in {q8_0, q4_0, f16, f32}", "quantize src0 as q8_0 or q4_0"},
		{ops.OpSoftMax, "mask type f16 is not f32", "cpy mask to f32"},
		{ops.OpIm2col, "dst type q8_0 not in {f32, f16}", "make the result f32 or f16"},
		{ops.OpFlashAttnExt, "k type f32 is not f16 (ggml-et accepts only f16 K/V)", "cpy K and V to f16"},
		{ops.OpFlashAttnExt, "v type q8_0 is not f16 (ggml-et accepts only f16 K/V)", "cpy K and V to f16"},
		{ops.OpFlashAttnExt, "max_bias != 0 (max_bias = 8)", "set max_bias to 0 (ggml-et has no ALiBi)"},
		{ops.OpSetRows, "src1 type i32 is not i64", "use i64 row indices"},
		{ops.OpScale, "src0 is not contiguous (ne = [4, 4, 1, 1], nb = [4, 32, 128, 128])", "insert a cont on src0"},
		{ops.OpGLU, "src0 rows are not contiguous (ne = [4, 4, 1, 1], nb = [8, 32, 128, 128])", "insert a cont on src0"},
		{ops.OpUnary, "src0.nb0 != 4 (nb0 = 8)", "insert a cont on src0"},
		{ops.OpMulMat, "src1.nb0 != type size (nb0 = 8, type size = 4)", "insert a cont on src1"},
		{ops.OpSSMConv, "src0.nb1 != ne0*4 (nb1 = 80, ne0*4 = 40)", "insert a cont on src0"},
		{ops.OpCont, "dst is not contiguous (ne = [4, 4, 1, 1], nb = [4, 32, 128, 128])", "make the destination contiguous"},
		{ops.OpSetRows, "dst elements of a row are not contiguous (nb0 = 8, type size 4)", "make the destination contiguous"},
		{ops.OpAdd, "src1.nb0 != 4 and src1.ne0 != 1 (nb0 = 8, ne0 = 4)", "insert a cont on src1"},
		{ops.OpPad, "ne0 % 16 != 0 and 16 % ne0 != 0 (ne0 = 100)", "pad the result's ne0 to 112 (a multiple of 16)"},
		{ops.OpPad, "ne0 % 16 != 0 and 16 % ne0 != 0 (ne0 = 3)", "pad the result's ne0 to 4 (a divisor of 16)"},
		{ops.OpPad, "lp0 or rp0 != 0 (lp0 = 1, rp0 = 1)", "pad only dims 1..3 (lp0 = rp0 = 0); widen ne0 with a concat instead"},
		{ops.OpRepeat, "src0.ne0 != 1 and src0.ne0 % 16 != 0 (ne0 = 10)", "pad src0.ne0 to 16 (a multiple of 16)"},
		{ops.OpCpy, "cpy f32 -> q8_0 not in {f32 -> f32, f16 -> f16, f32 -> f16}", "cpy to f32 or f16 (quantizing cpy runs on the host)"},
		{ops.OpCpy, "cpy f16 -> f32 not in {f32 -> f32, f16 -> f16, f32 -> f16}", "use f32 -> f32, f16 -> f16 or f32 -> f16"},
		{ops.OpRope, "n_dims > 512 (n_dims = 600)", "rotate at most 512 dims"},
		{ops.OpConv2D, "dilation != 1 (d0 = 2, d1 = 1)", "use d0 = d1 = 1 (or im2col + mul_mat)"},
		{ops.OpUnary, "unary op xielu is not accepted by ggml-et", "none: ggml-et has no kernel for it (it runs on the host)"},
		{ops.Op("argmax"), "op argmax is not implemented by ggml-et", "none: ggml-et has no kernel for it (it runs on the host)"},
		{ops.OpLightningIndexer, "op lightning_indexer is not implemented by ggml-et", "none: ggml-et has no kernel for it, and et has no host math for it (the case is skipped)"},
		// Conditions with no nearby supported variant.
		{ops.OpMulMatID, "src2.ne1 != src1.ne2 (src2.ne1 = 3, src1.ne2 = 4)", ""},
		{ops.OpFlashAttnExt, "nhq % nhk != 0 (nhq = 4, nhk = 3)", ""},
		{ops.OpSSMScan, "s.ne0 != B.ne0 (d_state) (16 != 8)", ""},
		{ops.OpSoftMax, "src0.ne0 <= 1 (ne0 = 1)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			if got := Suggest(tt.op, tt.reason); got != tt.want {
				t.Errorf("Suggest(%s, %q) = %q, want %q", tt.op, tt.reason, got, tt.want)
			}
		})
	}
}

// TestSuggestionsFromSupports: the reasons Supports really gives get the
// expected fixes (so a change of a reason's wording that breaks its
// suggestion fails here).
func TestSuggestionsFromSupports(t *testing.T) {
	m := abi.Default()
	tests := []struct {
		name  string
		build func(t *testing.T) (*gb, string)
		want  map[string]string // reason -> fix
	}{
		{"rms_norm ne0", func(t *testing.T) (*gb, string) {
			return newGB(t).leaf("x", ops.F32, 100, 2).node("y", "rms_norm", []string{"x"}, nil), "y"
		}, map[string]string{"ne0 % 16 != 0 (ne0 = 100)": "pad ne0 to 112 (a multiple of 16)"}},
		{"mul_mat q4_K", func(t *testing.T) (*gb, string) {
			return newGB(t).leaf("a", ops.Q4_K, 256, 16).leaf("b", ops.F32, 256, 1).node("y", "mul_mat", []string{"a", "b"}, nil), "y"
		}, map[string]string{"src0 type q4_K not in {f32, f16, q8_0, q4_0}": "quantize src0 as q8_0 or q4_0"}},
		{"flash_attn f32 kv", func(t *testing.T) (*gb, string) {
			return newGB(t).leaf("q", ops.F32, 64, 4, 2).leaf("k", ops.F32, 64, 32, 2).leaf("v", ops.F32, 64, 32, 2).
				node("y", "flash_attn_ext", []string{"q", "k", "v"}, map[string]any{"scale": 0.125}), "y"
		}, map[string]string{
			"k type f32 is not f16 (ggml-et accepts only f16 K/V)": "cpy K and V to f16",
			"v type f32 is not f16 (ggml-et accepts only f16 K/V)": "cpy K and V to f16",
		}},
		{"scale of a transpose", func(t *testing.T) (*gb, string) {
			return newGB(t).leaf("x", ops.F32, 16, 16).node("xt", "transpose", []string{"x"}, nil).
				node("y", "scale", []string{"xt"}, map[string]any{"scale": 2.0}), "y"
		}, map[string]string{"": "insert a cont on src0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, node := tt.build(t)
			idx := b.nodeIndex(node)
			v := Supports(b.g, idx, m)
			if v.Supported {
				t.Fatal("node is supported; the test needs a failing condition")
			}
			got := Suggestions(b.g.Nodes[idx].Op, v.Reasons)
			matched := 0
			for _, s := range got {
				want, ok := tt.want[s.Reason]
				if !ok {
					want, ok = tt.want[""] // any reason
				}
				if !ok {
					continue
				}
				matched++
				if s.Fix != want {
					t.Errorf("fix for %q = %q, want %q", s.Reason, s.Fix, want)
				}
			}
			if matched == 0 {
				t.Errorf("no expected reason among %v", v.Reasons)
			}
		})
	}
}

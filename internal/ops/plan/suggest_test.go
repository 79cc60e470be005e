package plan

import (
	"fmt"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// reasonOf is the reason a checker helper gives.
func reasonOf(f func(c *checker)) Reason {
	c := &checker{}
	f(c)
	if len(c.reasons) != 1 {
		panic(fmt.Sprintf("%d reasons", len(c.reasons)))
	}
	return c.reasons[0]
}

func strided(ne0, ne1 int64, nb0, nb1 uint64) *ops.Tensor {
	t := ops.New(ops.F32, ne0, ne1)
	t.Nb[0], t.Nb[1] = nb0, nb1
	t.Nb[2], t.Nb[3] = nb1*uint64(ne1), nb1*uint64(ne1)
	return t
}

// TestSuggest: each code gets its fix from the reason's subject and
// values (the sentence is not read: it is blanked here).
func TestSuggest(t *testing.T) {
	q4k, f16, q80 := ops.New(ops.Q4_K, 256, 1), ops.New(ops.F16, 4), ops.New(ops.Q8_0, 32)
	tests := []struct {
		op     ops.Op
		reason Reason
		want   string
	}{
		{ops.OpRMSNorm, reasonOf(func(c *checker) { c.mod("ne0", 100, 16) }), "pad ne0 to 112 (a multiple of 16)"},
		{ops.OpScale, reasonOf(func(c *checker) { c.mod("nelements", 30, 16) }), "pad so that the element count is a multiple of 16 (next: 32)"},
		{ops.OpFlashAttnExt, reasonOf(func(c *checker) { c.mod("dk", 80, 32) }), "pad dk to 96 (a multiple of 32)"},
		{ops.OpRWKVWKV6, reasonOf(func(c *checker) { c.mod("head size (k.ne0)", 12, 8) }), "pad head size (k.ne0) to 16 (a multiple of 8)"},
		{ops.OpSet, reasonOf(func(c *checker) { c.mod("offset", 12, 64) }), "align offset to 64 bytes (a multiple of 64)"},
		{ops.OpSet, Reason{Code: CodeMode, Subject: "inplace", Have: "false", Want: "true"}, "use ggml_set_inplace (inplace: true)"},
		{ops.OpMulMat, reasonOf(func(c *checker) { c.typeIn("src0", q4k, ops.F32, ops.F16, ops.Q8_0, ops.Q4_0) }), "quantize src0 as q8_0 or q4_0"},
		{ops.OpMulMat, reasonOf(func(c *checker) { c.typeIn("src1", f16, ops.F32) }), "cpy src1 to f32"},
		{ops.OpSoftMax, reasonOf(func(c *checker) { c.typeIn("mask", f16, ops.F32) }), "cpy mask to f32"},
		{ops.OpIm2col, reasonOf(func(c *checker) { c.typeIn("dst", q80, ops.F32, ops.F16) }), "make the result f32 or f16"},
		{ops.OpFlashAttnExt, Reason{Code: CodeType, Subject: "k", Have: "f32", Want: "f16"}, "cpy K and V to f16"},
		{ops.OpFlashAttnExt, Reason{Code: CodeType, Subject: "v", Have: "q8_0", Want: "f16"}, "cpy K and V to f16"},
		{ops.OpFlashAttnExt, Reason{Code: CodeNonZero, Subject: "max_bias", Have: "8", Want: "0"}, "set max_bias to 0 (ggml-et has no ALiBi)"},
		{ops.OpFlashAttnExt, Reason{Code: CodeMax, Subject: "dk", Have: "576", Want: "256"}, "use head sizes of at most 256"},
		{ops.OpSetRows, Reason{Code: CodeType, Subject: "src1", Have: "i32", Want: "i64"}, "use i64 row indices"},
		{ops.OpScale, reasonOf(func(c *checker) { c.contiguous("src0", strided(4, 4, 4, 32)) }), "insert a cont on src0"},
		{ops.OpGLU, reasonOf(func(c *checker) { c.contiguous1("src0", strided(4, 4, 8, 32)) }), "insert a cont on src0"},
		{ops.OpUnary, reasonOf(func(c *checker) { c.nb0("src0", strided(4, 4, 8, 32), 4) }), "insert a cont on src0"},
		{ops.OpMulMat, reasonOf(func(c *checker) { c.nb0Elem("src1", strided(4, 4, 8, 32)) }), "insert a cont on src1"},
		{ops.OpSSMConv, reasonOf(func(c *checker) { c.rowsDense("src0", strided(10, 4, 4, 80)) }), "insert a cont on src0"},
		{ops.OpCont, reasonOf(func(c *checker) { c.contiguous("dst", strided(4, 4, 4, 32)) }), "make the destination contiguous"},
		{ops.OpSetRows, reasonOf(func(c *checker) { c.contiguousRows("dst", strided(4, 4, 8, 32)) }), "make the destination contiguous"},
		{ops.OpAdd, Reason{Code: CodeStride, Subject: "src1", Have: "8", Want: "4"}, "insert a cont on src1"},
		{ops.OpPad, Reason{Code: CodePadNe0, Subject: "ne0", Have: "100", Want: "16"}, "pad the result's ne0 to 112 (a multiple of 16)"},
		{ops.OpPad, Reason{Code: CodePadNe0, Subject: "ne0", Have: "3", Want: "16"}, "pad the result's ne0 to 4 (a divisor of 16)"},
		{ops.OpPad, Reason{Code: CodeNonZero, Subject: "lp0,rp0", Have: "1,1", Want: "0"}, "pad only dims 1..3 (lp0 = rp0 = 0); widen ne0 with a concat instead"},
		{ops.OpRepeat, Reason{Code: CodeMultiple, Subject: "src0.ne0", Have: "10", Want: "16"}, "pad src0.ne0 to 16 (a multiple of 16)"},
		{ops.OpCpy, Reason{Code: CodeMode, Subject: "cpy", Have: "f32 -> q8_0"}, "cpy to f32 or f16 (quantizing cpy runs on the host)"},
		{ops.OpCpy, Reason{Code: CodeMode, Subject: "cpy", Have: "f16 -> f32"}, "use f32 -> f32, f16 -> f16 or f32 -> f16"},
		{ops.OpRope, Reason{Code: CodeMax, Subject: "n_dims", Have: "600", Want: "512"}, "rotate at most 512 dims"},
		{ops.OpConv2D, Reason{Code: CodeDilation, Subject: "d0,d1", Have: "2,1", Want: "1,1"}, "use d0 = d1 = 1 (or im2col + mul_mat)"},
		{ops.OpUnary, Reason{Code: CodeNoKernel, Subject: "xielu"}, "none: ggml-et has no kernel for it (it runs on the host)"},
		{ops.Op("argmax"), Reason{Code: CodeNoKernel, Subject: "argmax"}, "none: ggml-et has no kernel for it (it runs on the host)"},
		// Conditions with no nearby supported variant.
		{ops.OpMulMatID, reasonOf(func(c *checker) { c.eq("src2.ne1 != src1.ne2", 3, 4) }), ""},
		{ops.OpSSMScan, Reason{Code: CodeCondition, Text: "s.ne0 != B.ne0 (d_state) (16 != 8)"}, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason.Code)+" "+tt.want, func(t *testing.T) {
			r := tt.reason
			r.Text = "" // suggestions never read the sentence
			if got := Suggest(tt.op, r); got != tt.want {
				t.Errorf("Suggest(%s, %+v) = %q, want %q", tt.op, r, got, tt.want)
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
				want, ok := tt.want[s.Reason.Text]
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

// TestSuggestNoHostMath: for an op ggml-et does not implement and et has
// no reference math for, the suggestion says the case is skipped. (Every
// op of the catalog has host math today, so the test takes one away.)
func TestSuggestNoHostMath(t *testing.T) {
	info, _ := ops.Lookup(string(ops.OpLightningIndexer))
	info.HostMath = false
	defer func() { info.HostMath = true }()
	r := Reason{Code: CodeNoKernel, Subject: "lightning_indexer"}
	want := "none: ggml-et has no kernel for it, and et has no host math for it (the case is skipped)"
	if got := Suggest(ops.OpLightningIndexer, r); got != want {
		t.Errorf("Suggest = %q, want %q", got, want)
	}
	info.HostMath = true
	if got := Suggest(ops.OpLightningIndexer, r); got != "none: ggml-et has no kernel for it (it runs on the host)" {
		t.Errorf("with host math: Suggest = %q", got)
	}
}

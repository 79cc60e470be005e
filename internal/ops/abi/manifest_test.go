package abi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

func TestDefaultManifestValues(t *testing.T) {
	m := Default()
	if m.GGMLCommit() != "d99724f2b141fed9e1a9f402213506c081433465" {
		t.Errorf("commit = %s", m.GGMLCommit())
	}
	if m.Source() != "embedded:ggml-d99724f.yaml" {
		t.Errorf("source = %s", m.Source())
	}
	// §2.2 of reference/ggml-et-backend.md.
	wantOps := map[string]int32{
		"ADD": 2, "SUB": 6, "MUL": 7, "SQR": 9, "SUM_ROWS": 15, "CUMSUM": 16, "MEAN": 17, "REPEAT": 20,
		"CONCAT": 22, "NORM": 24, "RMS_NORM": 25, "GROUP_NORM": 27, "L2_NORM": 28, "MUL_MAT": 29,
		"MUL_MAT_ID": 30, "SCALE": 32, "SET": 33, "CPY": 34, "CONT": 35, "GET_ROWS": 40, "SET_ROWS": 42,
		"DIAG": 43, "SOFT_MAX": 46, "ROPE": 48, "CLAMP": 50, "IM2COL": 52, "CONV_2D": 56, "PAD": 64,
		"TRI": 72, "FILL": 73, "FLASH_ATTN_EXT": 74, "SSM_CONV": 76, "SSM_SCAN": 77, "RWKV_WKV6": 82,
		"RWKV_WKV7": 84, "SOLVE_TRI": 85, "GATED_DELTA_NET": 86, "UNARY": 91, "GLU": 100,
	}
	for name, want := range wantOps {
		if got, ok := m.OpValue(name); !ok || got != want {
			t.Errorf("OpValue(%s) = %d, %v; want %d", name, got, ok, want)
		}
		if got, ok := m.OpName(want); !ok || got != name {
			t.Errorf("OpName(%d) = %s, %v; want %s", want, got, ok, name)
		}
	}
	for _, name := range []string{"mul_mat", "GGML_OP_MUL_MAT", "Mul_Mat"} {
		if v, ok := m.OpValue(name); !ok || v != 29 {
			t.Errorf("OpValue(%q) = %d, %v; want 29", name, v, ok)
		}
	}
	if _, ok := m.OpValue("no_such_op"); ok {
		t.Error("OpValue(no_such_op) found")
	}
	// enum ggml_type of ggml d99724f2 (include/ggml.h).
	wantTypes := map[ops.Type]int32{
		ops.F32: 0, ops.F16: 1, ops.Q4_0: 2, ops.Q4_1: 3, ops.Q5_0: 6, ops.Q5_1: 7, ops.Q8_0: 8,
		ops.Q8_1: 9, ops.Q2_K: 10, ops.Q3_K: 11, ops.Q4_K: 12, ops.Q5_K: 13, ops.Q6_K: 14,
		ops.Q8_K: 15, ops.IQ2_XXS: 16, ops.IQ2_XS: 17, ops.IQ3_XXS: 18, ops.IQ1_S: 19,
		ops.IQ4_NL: 20, ops.IQ3_S: 21, ops.IQ2_S: 22, ops.IQ4_XS: 23, ops.I8: 24, ops.I16: 25,
		ops.I32: 26, ops.I64: 27, ops.F64: 28, ops.IQ1_M: 29, ops.BF16: 30, ops.TQ1_0: 34,
		ops.TQ2_0: 35, ops.MXFP4: 39, ops.NVFP4: 40, ops.Q1_0: 41, ops.Q2_0: 42,
	}
	if len(wantTypes) != len(ops.Types) {
		t.Errorf("test table has %d types, ops.Types %d", len(wantTypes), len(ops.Types))
	}
	for typ, want := range wantTypes {
		if got, ok := m.TypeValue(typ); !ok || got != want {
			t.Errorf("TypeValue(%s) = %d, %v; want %d", typ, got, ok, want)
		}
		if got, ok := m.TypeFromValue(want); !ok || got != typ {
			t.Errorf("TypeFromValue(%d) = %s, %v; want %s", want, got, ok, typ)
		}
	}
	for _, v := range []int32{4, 5, 31, 32, 33, 36, 37, 38, 43} {
		if typ, ok := m.TypeFromValue(v); ok {
			t.Errorf("TypeFromValue(%d) (removed or out of range in ggml) = %s", v, typ)
		}
	}
	// The unary ops of the case format, in ggml enum order, with XIELU at 17.
	unary := []string{"abs", "sgn", "neg", "step", "tanh", "elu", "relu", "sigmoid", "gelu", "gelu_quick",
		"silu", "hardswish", "hardsigmoid", "exp", "expm1", "softplus", "gelu_erf", "xielu", "floor", "ceil", "round", "trunc"}
	for i, name := range unary {
		if got, ok := m.UnaryValue(name); !ok || got != int32(i) {
			t.Errorf("UnaryValue(%s) = %d, %v; want %d", name, got, ok, i)
		}
	}
	if n, ok := m.UnaryName(10); !ok || n != "SILU" {
		t.Errorf("UnaryName(10) = %s", n)
	}
	for i, name := range []string{"reglu", "geglu", "swiglu", "swiglu_oai", "geglu_erf", "geglu_quick"} {
		if got, ok := m.GLUValue(name); !ok || got != int32(i) {
			t.Errorf("GLUValue(%s) = %d, %v; want %d", name, got, ok, i)
		}
	}
	if _, ok := m.GLUValue("swiglu_clamp"); ok {
		t.Error("ggml d99724f has no SWIGLU_CLAMP")
	}
	if n, ok := m.GLUName(3); !ok || n != "SWIGLU_OAI" {
		t.Errorf("GLUName(3) = %s", n)
	}
	for name, want := range map[string]int32{"normal": 0, "neox": 2, "mrope": 8, "vision": 24, "imrope": 40} {
		if got, ok := m.RopeMode(name); !ok || got != want {
			t.Errorf("RopeMode(%s) = %d, %v; want %d", name, got, ok, want)
		}
	}
	if m.UberkernelParamAlign() != 64 {
		t.Errorf("param align = %d", m.UberkernelParamAlign())
	}
	if s, ok := m.Size("tensor"); !ok || s != 336 {
		t.Errorf("tensor size = %d", s)
	}
}

// §3: ids are the 1-based positions in the ASCII-sorted list of batchable
// kernels.
func TestUberkernelIDs(t *testing.T) {
	batchable := []string{"concat_f32", "cont_f16", "cumsum_f32", "diag_f32", "el_map_f32", "fill_f32",
		"flash_attn_ext_f16_me", "flash_attn_ext_f32", "gated_delta_net_f32", "glu_f32", "group_norm_f32",
		"im2col", "l2_norm_f32", "mul_mat_Q4_0", "mul_mat_Q8_0", "mul_mat_f16", "mul_mat_f16_matrix_engine",
		"mul_mat_f32", "mul_mat_f32_matrix_engine", "mul_mat_id_f32", "norm_f32", "pad_f32", "repeat_f32",
		"rms_norm_f32", "rms_norm_mul_f32", "rope_f32", "rwkv_wkv6_f32", "rwkv_wkv7_f32", "scale_f32",
		"set_f32", "set_rows_f32", "softmax_f32", "solve_tri_f32", "sqr_f32", "ssm_scan_f32", "sum_rows_f32", "tri_f32"}
	sorted := append([]string(nil), batchable...)
	sort.Strings(sorted) // Go sorts bytewise: ASCII, like CMake list(SORT)
	m := Default()
	for i, k := range sorted {
		id, ok := m.UberkernelID(k)
		if !ok || int(id) != i+1 {
			t.Errorf("UberkernelID(%s) = %d, %v; want %d", k, id, ok, i+1)
		}
		if back, ok := m.UberkernelKernel(id); !ok || back != k {
			t.Errorf("UberkernelKernel(%d) = %s", id, back)
		}
	}
	for _, k := range []string{"unary_f32", "cpy_f32_f16", "cont_f32", "get_rows_f32", "ssm_conv_f32",
		"mean_f32", "clamp_f32", "mul_mat_Q4_0_matrix_engine", "mul_mat_id_Q4_0", "mul_mat_id_Q8_0",
		"conv_2d_f32_me", "memops"} {
		if _, ok := m.UberkernelID(k); ok {
			t.Errorf("%s must not be batchable", k)
		}
	}
	if _, ok := m.UberkernelKernel(0); ok {
		t.Error("id 0 is GGML_ET_UBERKERNEL_KERNEL_INVALID")
	}
}

// §4: the 50 kernel ELFs each map to a params layout.
func TestKernelLayouts(t *testing.T) {
	elfs := strings.Fields(`el_map_f32 flash_attn_ext_f32 glu_f32 scale_f32 mul_mat_f32 mul_mat_f32_matrix_engine
		mul_mat_id_f32 mul_mat_id_Q4_0 mul_mat_id_Q8_0 mul_mat_Q8_0 mul_mat_Q4_0 mul_mat_Q4_0_matrix_engine
		mul_mat_f16 mul_mat_f16_matrix_engine rope_f32 unary_f32 sqr_f32 clamp_f32 sum_rows_f32 mean_f32
		cumsum_f32 norm_f32 l2_norm_f32 group_norm_f32 rms_norm_f32 rms_norm_mul_f32 softmax_f32 im2col
		get_rows_f32 concat_f32 repeat_f32 rwkv_wkv6_f32 rwkv_wkv7_f32 gated_delta_net_f32 cont_f32 cont_f16
		cpy_f32_f16 flash_attn_ext_f16_me set_rows_f32 set_f32 fill_f32 pad_f32 diag_f32 tri_f32 solve_tri_f32
		ssm_conv_f32 ssm_scan_f32 conv_2d_f32_me memops uberkernel`)
	if len(elfs) != 50 {
		t.Fatalf("test list has %d kernels", len(elfs))
	}
	got := Default().Kernels()
	sorted := append([]string(nil), elfs...)
	sort.Strings(sorted)
	if strings.Join(got, " ") != strings.Join(sorted, " ") {
		t.Errorf("Kernels() = %v\nwant %v", got, sorted)
	}
	spot := map[string]string{
		"mul_mat_Q8_0": "mm_q8", "mul_mat_Q4_0_matrix_engine": "binary", "el_map_f32": "elmap",
		"rms_norm_mul_f32": "rms_norm_mul", "flash_attn_ext_f16_me": "flash_attn", "cpy_f32_f16": "cont",
		"conv_2d_f32_me": "binary", "uberkernel": "uberkernel", "memops": "memops", "rope_f32": "rope",
	}
	for k, want := range spot {
		l, ok := LayoutFor(k)
		if !ok || l.Name != want {
			t.Errorf("LayoutFor(%s) = %v, %v; want %s", k, l, ok, want)
		}
	}
	if _, ok := LayoutFor("mul_mat_Q4_K"); ok {
		t.Error("mul_mat_Q4_K is not in ggml d99724f")
	}
}

func TestLoadDefaultFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abi.yaml")
	if err := os.WriteFile(path, DefaultYAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Source() != path || m.GGMLCommit() != Default().GGMLCommit() {
		t.Errorf("loaded %s %s", m.Source(), m.GGMLCommit())
	}
	if v, _ := m.OpValue("glu"); v != 100 {
		t.Errorf("GLU = %d", v)
	}
}

func TestLoadErrors(t *testing.T) {
	base := string(DefaultYAML())
	tests := []struct {
		name   string
		edit   func() string
		atLine string // the line the error must point at ("" = no line)
		want   string
	}{
		{"unknown top-level key", func() string { return base + "extras: 1\n" }, "extras:", `unknown key "extras"`},
		{"unknown ggml key", func() string {
			return strings.Replace(base, "  describe:", "  version: x\n  describe:", 1)
		}, "version: x", `ggml: unknown key "version"`},
		{"unknown uberkernel key", func() string {
			return strings.Replace(base, "  param_align: 64", "  param_align: 64\n  slots: 4", 1)
		}, "slots: 4", `uberkernel: unknown key "slots"`},
		{"unknown type", func() string {
			return strings.Replace(base, "  q4_K: 12", "  q4_K: 12\n  q7_K: 99", 1)
		}, "q7_K: 99", `types: unknown type "q7_K"`},
		{"bad yaml", func() string {
			return strings.Replace(base, "  ADD: 2", "  ADD: [2", 1)
		}, "", "invalid YAML"},
		{"tab indentation", func() string {
			return strings.Replace(base, "  SUB: 6", "\tSUB: 6", 1)
		}, "", "invalid YAML"},
		{"missing required op", func() string {
			return strings.Replace(base, "  SOFT_MAX: 46\n", "", 1)
		}, "ops:", "ops: missing required entry GGML_OP_SOFT_MAX"},
		{"missing required unary", func() string {
			return strings.Replace(base, "  SILU: 10\n", "", 1)
		}, "unary_ops:", "missing required entry GGML_UNARY_OP_SILU"},
		{"missing type", func() string {
			return strings.Replace(base, "  i64: 27\n", "", 1)
		}, "types:", "types: missing required type i64"},
		{"missing section", func() string {
			i := strings.Index(base, "glu_ops:")
			j := strings.Index(base, "# GGML_ROPE_TYPE")
			return base[:i] + base[j:]
		}, "", `missing required section "glu_ops"`},
		{"missing commit", func() string {
			return strings.Replace(base, "  commit: d99724f2b141fed9e1a9f402213506c081433465\n", "", 1)
		}, "ggml:", `ggml: missing required key "commit"`},
		{"duplicate value", func() string {
			return strings.Replace(base, "  SUB: 6", "  SUB: 2", 1)
		}, "SUB: 2", "ops.SUB: value 2 is already used by ADD"},
		{"duplicate key", func() string {
			return strings.Replace(base, "  SUB: 6", "  SUB: 6\n  ADD: 3", 1)
		}, "ADD: 3", `ops: duplicate key "ADD"`},
		{"duplicate name after normalisation", func() string {
			return strings.Replace(base, "  SUB: 6", "  SUB: 6\n  GGML_OP_ADD: 3", 1)
		}, "GGML_OP_ADD: 3", `ops: duplicate name "ADD"`},
		{"not an integer", func() string {
			return strings.Replace(base, "  MUL: 7", "  MUL: seven", 1)
		}, "MUL: seven", `ops.MUL: want an integer, got "seven"`},
		{"float value", func() string {
			return strings.Replace(base, "  MUL: 7", "  MUL: 7.5", 1)
		}, "MUL: 7.5", `want an integer`},
		{"enum out of range", func() string {
			return strings.Replace(base, "  MUL: 7", "  MUL: 4294967296", 1)
		}, "MUL: 4294967296", "out of range"},
		{"section not a mapping", func() string {
			i := strings.Index(base, "rope_modes:")
			j := strings.Index(base, "# The uberkernel")
			return base[:i] + "rope_modes: [0, 2]\n" + base[j:]
		}, "rope_modes: [0, 2]", "rope_modes: want a mapping"},
		{"struct size changed", func() string {
			return strings.Replace(base, "  rope: 1408", "  rope: 1416", 1)
		}, "rope: 1416", "sizes.rope: 1416 bytes, but et's rope layout is 1408 bytes"},
		{"tensor size changed", func() string {
			return strings.Replace(base, "  tensor: 336", "  tensor: 344", 1)
		}, "tensor: 344", "struct ggml_tensor of 344 bytes is not supported"},
		{"unknown size", func() string {
			return strings.Replace(base, "  tensor: 336", "  tensor: 336\n  conv_3d: 1008", 1)
		}, "conv_3d: 1008", `sizes: unknown params struct "conv_3d"`},
		{"uberkernel id 0", func() string {
			return strings.Replace(base, "    concat_f32: 1", "    concat_f32: 0", 1)
		}, "concat_f32: 0", "uberkernel.kernels.concat_f32: 0 is out of range [1, 65535]"},
		{"uberkernel id reused", func() string {
			return strings.Replace(base, "    cont_f16: 2", "    cont_f16: 1", 1)
		}, "cont_f16: 1", "id 1 is already used by concat_f32"},
		{"param align", func() string {
			return strings.Replace(base, "  param_align: 64", "  param_align: 48", 1)
		}, "param_align: 48", "not a power of two"},
		{"unknown layout", func() string {
			return strings.Replace(base, "  mul_mat_Q8_0: mm_q8", "  mul_mat_Q8_0: mm_q4", 1)
		}, "mul_mat_Q8_0: mm_q4", `kernels.mul_mat_Q8_0: unknown params layout "mm_q4"`},
		{"batchable kernel without layout", func() string {
			return strings.Replace(base, "  rope_f32: rope\n", "", 1)
		}, "\nkernels:", "kernels: uberkernel kernel rope_f32 has no entry"},
		{"empty", func() string { return "" }, "", "empty ABI manifest"},
		{"comments only", func() string { return "# nothing\n" }, "", "empty ABI manifest"},
		{"two documents", func() string { return base + "---\nops: {}\n" }, "---", "more than one YAML document"},
		{"not a mapping", func() string { return "- 1\n- 2\n" }, "- 1", "manifest: want a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.edit()
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("err is %T, want *ManifestError", err)
			}
			if _, ok := err.(interface{ InputError() }); !ok {
				t.Error("err has no InputError method")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if strings.Contains(tt.want, "invalid YAML") && me.Line == 0 {
				t.Errorf("YAML syntax error without a line: %v", err)
			}
			if tt.atLine != "" {
				marker := strings.TrimPrefix(tt.atLine, "\n")
				line := 0
				for i, l := range strings.Split(text, "\n") {
					if (strings.HasPrefix(tt.atLine, "\n") && l == marker) || (!strings.HasPrefix(tt.atLine, "\n") && strings.Contains(l, marker)) {
						line = i + 1
						break
					}
				}
				if line == 0 {
					t.Fatalf("marker %q not in the manifest", tt.atLine)
				}
				if me.Line != line {
					t.Errorf("line = %d, want %d (%q); err = %v", me.Line, line, tt.atLine, err)
				}
				prefix := fmt.Sprintf("%s:%d: ", path, line)
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("err = %v, want prefix %q", err, prefix)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": cannot read the ABI manifest") {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Error("err does not wrap os.ErrNotExist")
	}
	if _, ok := err.(interface{ InputError() }); !ok {
		t.Error("err has no InputError method")
	}
}

func TestLoadTestdata(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{"unknown-key.yaml", `testdata/unknown-key.yaml:3: ggml: unknown key "version" (want one of commit, describe)`},
		// yaml.v3 reports the line of the open flow sequence's context.
		{"bad-syntax.yaml", "testdata/bad-syntax.yaml:1: invalid YAML: did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load("testdata/" + tt.file)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// A manifest of an older ggml that lacks the newer types (bf16, mxfp4,
// q1_0, ...) still loads; those types just have no value.
func TestLoadOptionalTypes(t *testing.T) {
	text := string(DefaultYAML())
	for _, line := range []string{"  bf16: 30\n", "  mxfp4: 39\n", "  nvfp4: 40\n", "  q1_0: 41\n", "  q2_0: 42\n"} {
		if !strings.Contains(text, line) {
			t.Fatalf("default manifest has no %q", line)
		}
		text = strings.Replace(text, line, "", 1)
	}
	path := filepath.Join(t.TempDir(), "abi.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.TypeValue(ops.BF16); ok {
		t.Errorf("TypeValue(bf16) = %d, want none", v)
	}
	if v, ok := m.TypeValue(ops.Q6_K); !ok || v != 14 {
		t.Errorf("TypeValue(q6_K) = %d, %v; want 14", v, ok)
	}
}

// TestDefaultManifestAllOps: the embedded manifest knows every GGML_OP_*
// of ggml.h at d99724f, numbered in declaration order (the list below is
// copied from include/ggml.h, enum ggml_op).
func TestDefaultManifestAllOps(t *testing.T) {
	ggmlOps := strings.Fields(`NONE DUP ADD ADD_ID ADD1 ACC SUB MUL DIV SQR SQRT LOG SIN COS SUM SUM_ROWS
		CUMSUM MEAN ARGMAX COUNT_EQUAL REPEAT REPEAT_BACK CONCAT SILU_BACK NORM RMS_NORM RMS_NORM_BACK
		GROUP_NORM L2_NORM MUL_MAT MUL_MAT_ID OUT_PROD SCALE SET CPY CONT RESHAPE VIEW PERMUTE TRANSPOSE
		GET_ROWS GET_ROWS_BACK SET_ROWS DIAG DIAG_MASK_INF DIAG_MASK_ZERO SOFT_MAX SOFT_MAX_BACK ROPE
		ROPE_BACK CLAMP CONV_TRANSPOSE_1D IM2COL IM2COL_BACK IM2COL_3D COL2IM_1D CONV_2D CONV_3D
		CONV_2D_DW CONV_TRANSPOSE_2D POOL_1D POOL_2D POOL_2D_BACK UPSCALE PAD PAD_REFLECT_1D ROLL ARANGE
		TIMESTEP_EMBEDDING ARGSORT TOP_K LEAKY_RELU TRI FILL FLASH_ATTN_EXT FLASH_ATTN_BACK SSM_CONV
		SSM_SCAN WIN_PART WIN_UNPART GET_REL_POS ADD_REL_POS RWKV_WKV6 GATED_LINEAR_ATTN RWKV_WKV7
		SOLVE_TRI GATED_DELTA_NET LIGHTNING_INDEXER DSV4_HC_COMB DSV4_HC_PRE DSV4_HC_POST UNARY
		MAP_CUSTOM1 MAP_CUSTOM2 MAP_CUSTOM3 CUSTOM CROSS_ENTROPY_LOSS CROSS_ENTROPY_LOSS_BACK
		OPT_STEP_ADAMW OPT_STEP_SGD GLU`)
	if len(ggmlOps) != 101 {
		t.Fatalf("test list has %d ops, want 101 (GGML_OP_COUNT)", len(ggmlOps))
	}
	m := Default()
	for want, name := range ggmlOps {
		v, ok := m.OpValue(name)
		if !ok || v != int32(want) {
			t.Errorf("OpValue(%s) = %d, %v; want %d", name, v, ok, want)
		}
		if n, ok := m.OpName(int32(want)); !ok || n != name {
			t.Errorf("OpName(%d) = %q, %v; want %s", want, n, ok, name)
		}
	}
	if _, ok := m.OpName(101); ok {
		t.Errorf("OpName(101) exists; GGML_OP_COUNT is not an op")
	}
}

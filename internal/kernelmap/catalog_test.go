package kernelmap

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// kernelsList is ggml-et's KERNELS list at ggml d99724f, in its CMake order
// (reference/ggml-et-backend.md §4).
const kernelsList = `el_map_f32 flash_attn_ext_f32 glu_f32 scale_f32 mul_mat_f32 mul_mat_f32_matrix_engine mul_mat_id_f32 mul_mat_id_Q4_0 mul_mat_id_Q8_0 mul_mat_Q8_0 mul_mat_Q4_0 mul_mat_Q4_0_matrix_engine mul_mat_f16 mul_mat_f16_matrix_engine rope_f32 unary_f32 sqr_f32 clamp_f32 sum_rows_f32 mean_f32 cumsum_f32 norm_f32 l2_norm_f32 group_norm_f32 rms_norm_f32 rms_norm_mul_f32 softmax_f32 im2col get_rows_f32 concat_f32 repeat_f32 rwkv_wkv6_f32 rwkv_wkv7_f32 gated_delta_net_f32 cont_f32 cont_f16 cpy_f32_f16 flash_attn_ext_f16_me set_rows_f32 set_f32 fill_f32 pad_f32 diag_f32 tri_f32 solve_tri_f32 ssm_conv_f32 ssm_scan_f32 conv_2d_f32_me memops uberkernel`

// uberkernelIDs is the uberkernel kernel-id list at ggml d99724f, ids 1..37
// in order (reference/ggml-et-backend.md §3).
const uberkernelIDs = `concat_f32 cont_f16 cumsum_f32 diag_f32 el_map_f32 fill_f32 flash_attn_ext_f16_me flash_attn_ext_f32 gated_delta_net_f32 glu_f32 group_norm_f32 im2col l2_norm_f32 mul_mat_Q4_0 mul_mat_Q8_0 mul_mat_f16 mul_mat_f16_matrix_engine mul_mat_f32 mul_mat_f32_matrix_engine mul_mat_id_f32 norm_f32 pad_f32 repeat_f32 rms_norm_f32 rms_norm_mul_f32 rope_f32 rwkv_wkv6_f32 rwkv_wkv7_f32 scale_f32 set_f32 set_rows_f32 softmax_f32 solve_tri_f32 sqr_f32 ssm_scan_f32 sum_rows_f32 tri_f32`

func TestCatalogMatchesKernelsList(t *testing.T) {
	want := strings.Fields(kernelsList)
	if len(want) != 50 {
		t.Fatalf("reference list has %d names, want 50", len(want))
	}
	sort.Strings(want)
	got := KernelNames()
	if !slices.Equal(got, want) {
		t.Errorf("catalog names differ from ggml-et's KERNELS list\ngot:  %v\nwant: %v", got, want)
	}
}

func TestCatalogSortedUnique(t *testing.T) {
	for i := 1; i < len(Catalog); i++ {
		if Catalog[i-1].Name >= Catalog[i].Name {
			t.Errorf("catalog not sorted or has a duplicate at %d: %q then %q", i, Catalog[i-1].Name, Catalog[i].Name)
		}
	}
}

func TestCatalogUberkernel(t *testing.T) {
	var batchable []string
	for _, k := range Catalog {
		if k.Uberkernel {
			batchable = append(batchable, k.Name)
		}
	}
	// The uberkernel numbers its kernels in ASCII order (CMake list(SORT)):
	// Go's string order is the same, so the batchable catalog entries in
	// catalog order are the id list.
	want := strings.Fields(uberkernelIDs)
	if !slices.Equal(batchable, want) {
		t.Errorf("batchable kernels differ from the uberkernel id list\ngot:  %v\nwant: %v", batchable, want)
	}
}

func TestCatalogFields(t *testing.T) {
	for _, k := range Catalog {
		me := strings.HasSuffix(k.Name, "_matrix_engine") || strings.HasSuffix(k.Name, "_me")
		if k.MatrixEngine != me {
			t.Errorf("%s: MatrixEngine = %v, want %v", k.Name, k.MatrixEngine, me)
		}
		if len(k.Ops) == 0 && k.Name != "memops" && k.Name != "uberkernel" {
			t.Errorf("%s: no ops", k.Name)
		}
		for _, op := range k.Ops {
			if op != strings.ToUpper(op) || strings.HasPrefix(op, "GGML_OP_") {
				t.Errorf("%s: op %q is not a bare upper-case ggml op name", k.Name, op)
			}
		}
	}
}

func TestLookupKernel(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"mul_mat_Q8_0", true},
		{"clamp_f32", true},  // first
		{"unary_f32", true},  // last
		{"uberkernel", true}, // no ops
		{"mul_mat_q8_0", false},
		{"mul_mat_Q4_K", false}, // newer ggml only
		{"", false},
		{"zzz", false},
		{"a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, ok := LookupKernel(tt.name)
			if ok != tt.ok {
				t.Fatalf("LookupKernel(%q) ok = %v, want %v", tt.name, ok, tt.ok)
			}
			if ok && k.Name != tt.name {
				t.Errorf("LookupKernel(%q).Name = %q", tt.name, k.Name)
			}
			if KnownKernel(tt.name) != tt.ok {
				t.Errorf("KnownKernel(%q) = %v, want %v", tt.name, !tt.ok, tt.ok)
			}
		})
	}
}

func TestKernelsForOp(t *testing.T) {
	tests := []struct {
		op   string
		want []string
	}{
		{"MUL_MAT", []string{"mul_mat_Q4_0", "mul_mat_Q4_0_matrix_engine", "mul_mat_Q8_0", "mul_mat_f16", "mul_mat_f16_matrix_engine", "mul_mat_f32", "mul_mat_f32_matrix_engine"}},
		{"ADD", []string{"el_map_f32"}},
		{"RMS_NORM+MUL", []string{"rms_norm_mul_f32"}},
		{"CPY", []string{"cont_f16", "cont_f32", "cpy_f32_f16"}},
		{"XIELU", nil},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			if got := KernelsForOp(tt.op); !slices.Equal(got, tt.want) {
				t.Errorf("KernelsForOp(%q) = %v, want %v", tt.op, got, tt.want)
			}
		})
	}
}

package kernelmap

import "sort"

// KernelInfo describes one compute-kernel ELF that ggml-et launches.
type KernelInfo struct {
	// Name is the kernel name, also the ELF file name without ".elf"
	// (GGML_ET_KERNELS_PATH/<Name>.elf).
	Name string
	// Ops are the ggml ops (GGML_OP_* names without the prefix) whose
	// dispatch can choose this kernel. A fused pair is written "A+B".
	// Empty for kernels that no op selects directly (memops, uberkernel).
	Ops []string
	// Uberkernel is true when the kernel can be batched into the
	// uberkernel (GGML_ET_UBERKERNEL) at the ggml version described in
	// reference/ggml-et-backend.md.
	Uberkernel bool
	// MatrixEngine is true for kernels that use the tensor engine and
	// assume all 32 compute shires: a smaller launch mask silently leaves
	// part of dst unwritten.
	MatrixEngine bool
	// AllShires, when not "", says why the kernel needs all 32 compute
	// shires and what a smaller launch mask does: every matrix-engine
	// kernel, the kernels that stride their rows by the absolute hart id
	// over 2048 harts (they leave rows unwritten, with no error) and those
	// that wait at a barrier across all 32 shires (the launch hangs).
	// Found by running each kernel on sys_emu on one shire other than
	// shire 0 (mask 0x2) against the full mask (docs/run-op-perf.md).
	AllShires string
	// Note is a caveat worth showing next to the name, or "".
	Note string
}

// The reasons a kernel needs all 32 shires (KernelInfo.AllShires).
const (
	meAllShires      = "uses the matrix engine and needs all 32 shires: a smaller mask leaves part of the output unwritten"
	hartAllShires    = "splits its rows by absolute hart id over all 2048 harts, not over the launched shires: a smaller mask leaves rows unwritten"
	barrierAllShires = "waits at a barrier across all 32 shires: a smaller mask hangs the launch"
	meBarrierShires  = "uses the matrix engine and waits at a barrier across all 32 shires: a smaller mask hangs the launch"
)

// Catalog is the kernel ELF list (ggml-et's KERNELS, 50 names at ggml
// d99724f) sorted by name, with the ops that choose each kernel. Newer
// ggml versions and forks add kernels (mul_mat_Q4_K, ...): callers must
// treat a name absent from the catalog as unknown, not as an error.
var Catalog = []KernelInfo{
	{Name: "clamp_f32", Ops: []string{"CLAMP"}},
	{Name: "concat_f32", Ops: []string{"CONCAT"}, Uberkernel: true},
	{Name: "cont_f16", Ops: []string{"CONT", "CPY"}, Uberkernel: true},
	{Name: "cont_f32", Ops: []string{"CONT", "CPY", "REPEAT"}, Note: "REPEAT to the same shape is a copy"},
	{Name: "conv_2d_f32_me", Ops: []string{"CONV_2D"}, MatrixEngine: true, AllShires: meAllShires},
	{Name: "cpy_f32_f16", Ops: []string{"CPY"}},
	{Name: "cumsum_f32", Ops: []string{"CUMSUM"}, Uberkernel: true},
	{Name: "diag_f32", Ops: []string{"DIAG"}, Uberkernel: true},
	{Name: "el_map_f32", Ops: []string{"ADD", "SUB", "MUL"}, Uberkernel: true, Note: "the operation comes from dst.op"},
	{Name: "fill_f32", Ops: []string{"FILL"}, Uberkernel: true},
	{Name: "flash_attn_ext_f16_me", Ops: []string{"FLASH_ATTN_EXT"}, Uberkernel: true, MatrixEngine: true, AllShires: meBarrierShires},
	{Name: "flash_attn_ext_f32", Ops: []string{"FLASH_ATTN_EXT"}, Uberkernel: true, Note: "unreachable: supports_op requires F16 K and V"},
	{Name: "gated_delta_net_f32", Ops: []string{"GATED_DELTA_NET"}, Uberkernel: true},
	{Name: "get_rows_f32", Ops: []string{"GET_ROWS"}},
	{Name: "glu_f32", Ops: []string{"GLU"}, Uberkernel: true},
	{Name: "group_norm_f32", Ops: []string{"GROUP_NORM"}, Uberkernel: true},
	{Name: "im2col", Ops: []string{"IM2COL"}, Uberkernel: true},
	{Name: "l2_norm_f32", Ops: []string{"L2_NORM"}, Uberkernel: true},
	{Name: "mean_f32", Ops: []string{"MEAN"}},
	{Name: "memops", Note: "buffer and padding clears, not an op"},
	{Name: "mul_mat_Q4_0", Ops: []string{"MUL_MAT"}, Uberkernel: true, AllShires: hartAllShires},
	{Name: "mul_mat_Q4_0_matrix_engine", Ops: []string{"MUL_MAT"}, MatrixEngine: true, AllShires: meAllShires},
	{Name: "mul_mat_Q8_0", Ops: []string{"MUL_MAT", "MUL_MAT+ADD"}, Uberkernel: true, AllShires: hartAllShires},
	{Name: "mul_mat_f16", Ops: []string{"MUL_MAT"}, Uberkernel: true},
	{Name: "mul_mat_f16_matrix_engine", Ops: []string{"MUL_MAT"}, Uberkernel: true, MatrixEngine: true, AllShires: meAllShires},
	{Name: "mul_mat_f32", Ops: []string{"MUL_MAT"}, Uberkernel: true},
	{Name: "mul_mat_f32_matrix_engine", Ops: []string{"MUL_MAT"}, Uberkernel: true, MatrixEngine: true, AllShires: meAllShires},
	{Name: "mul_mat_id_Q4_0", Ops: []string{"MUL_MAT_ID"}},
	{Name: "mul_mat_id_Q8_0", Ops: []string{"MUL_MAT_ID"}},
	{Name: "mul_mat_id_f32", Ops: []string{"MUL_MAT_ID"}, Uberkernel: true},
	{Name: "norm_f32", Ops: []string{"NORM"}, Uberkernel: true},
	{Name: "pad_f32", Ops: []string{"PAD"}, Uberkernel: true},
	{Name: "repeat_f32", Ops: []string{"REPEAT"}, Uberkernel: true},
	{Name: "rms_norm_f32", Ops: []string{"RMS_NORM"}, Uberkernel: true},
	{Name: "rms_norm_mul_f32", Ops: []string{"RMS_NORM+MUL"}, Uberkernel: true},
	{Name: "rope_f32", Ops: []string{"ROPE"}, Uberkernel: true, AllShires: barrierAllShires},
	{Name: "rwkv_wkv6_f32", Ops: []string{"RWKV_WKV6"}, Uberkernel: true},
	{Name: "rwkv_wkv7_f32", Ops: []string{"RWKV_WKV7"}, Uberkernel: true},
	{Name: "scale_f32", Ops: []string{"SCALE"}, Uberkernel: true},
	{Name: "set_f32", Ops: []string{"SET"}, Uberkernel: true},
	{Name: "set_rows_f32", Ops: []string{"SET_ROWS"}, Uberkernel: true},
	{Name: "softmax_f32", Ops: []string{"SOFT_MAX"}, Uberkernel: true},
	{Name: "solve_tri_f32", Ops: []string{"SOLVE_TRI"}, Uberkernel: true},
	{Name: "sqr_f32", Ops: []string{"SQR"}, Uberkernel: true},
	{Name: "ssm_conv_f32", Ops: []string{"SSM_CONV"}},
	{Name: "ssm_scan_f32", Ops: []string{"SSM_SCAN"}, Uberkernel: true},
	{Name: "sum_rows_f32", Ops: []string{"SUM_ROWS"}, Uberkernel: true},
	{Name: "tri_f32", Ops: []string{"TRI"}, Uberkernel: true},
	{Name: "uberkernel", Note: "runs batched kernels (GGML_ET_UBERKERNEL)", AllShires: barrierAllShires},
	{Name: "unary_f32", Ops: []string{"UNARY"}},
}

// LookupKernel returns the catalog entry for a kernel name. Names are
// case-sensitive (mul_mat_Q8_0, not mul_mat_q8_0).
func LookupKernel(name string) (KernelInfo, bool) {
	i := sort.Search(len(Catalog), func(i int) bool { return Catalog[i].Name >= name })
	if i < len(Catalog) && Catalog[i].Name == name {
		return Catalog[i], true
	}
	return KernelInfo{}, false
}

// KnownKernel reports whether ggml-et uses a kernel of this name.
func KnownKernel(name string) bool {
	_, ok := LookupKernel(name)
	return ok
}

// KernelNames returns the catalog's kernel names, sorted.
func KernelNames() []string {
	names := make([]string, len(Catalog))
	for i, k := range Catalog {
		names[i] = k.Name
	}
	return names
}

// KernelsForOp returns the names of the kernels that an op (a GGML_OP_*
// name without the prefix, or a fused "A+B") can dispatch to, sorted.
func KernelsForOp(op string) []string {
	var names []string
	for _, k := range Catalog {
		for _, o := range k.Ops {
			if o == op {
				names = append(names, k.Name)
				break
			}
		}
	}
	return names
}

package plan

import (
	"sort"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// The ggml-et op support matrix (`et ops list`): for every op of the
// catalog, the kernels ggml-et may launch for it, the types it accepts,
// whether the uberkernel can batch it and its key supports_op constraints
// in one line (reference/ggml-et-backend.md §1.2, §1.3).
//
// What the rules table already knows is derived from it: whether ggml-et
// dispatches the op (ggmlETOps), whether et models it (a rules row), the
// unary and GLU sub-ops accepted (unaryAccepted, gluAccepted), and, from
// the manifest, each kernel's params layout and uberkernel id. The rest —
// the kernel list (a row's kernel selector is a function), accepted types
// and the constraint line — is declared in opDocs below, next to the
// rules; a test checks that the kernels the rules choose for the
// testcases are the ones declared here.

// KernelInfo is one kernel an op may launch.
type KernelInfo struct {
	Name string
	// Layout is the params struct the kernel reads ("" when the manifest
	// has no entry for it) and ParamsBytes its size.
	Layout      string
	ParamsBytes int
	// Batchable is true when the uberkernel can batch the kernel;
	// UberkernelID is its id then (0 otherwise).
	Batchable    bool
	UberkernelID uint16
}

// OpRow is one row of the support matrix.
type OpRow struct {
	// Op is the case-file op name (mul_mat) and GGML the ggml name (MUL_MAT).
	Op   ops.Op
	GGML string
	// View ops are skipped by ggml-et (no launch).
	View bool
	// Implemented is true when ggml-et's graph_compute dispatches the op.
	Implemented bool
	// Modelled is true when et has the op's rules (support check, kernel
	// choice, params encoding); an implemented op that is not modelled
	// runs on the reference math.
	Modelled bool
	// HostMath is true when et has reference math for the op (a view op
	// needs none): an op ggml-et does not implement then runs on the
	// host; without it a case is skipped (ops.NoHostMathError).
	HostMath bool
	Kernels  []KernelInfo
	// Uberkernel is "yes" when every kernel can be batched, "no" when none
	// can and "partly" otherwise ("-" for an op that launches nothing).
	Uberkernel string
	// Types and Constraints are one line each ("" when not implemented).
	Types       string
	Constraints string
}

// SubOpRow says whether ggml-et accepts one unary or GLU sub-op.
type SubOpRow struct {
	// Op is ops.OpUnary or ops.OpGLU; Name the sub-op (silu, swiglu ...).
	Op        ops.Op
	Name      string
	Supported bool
}

// FusionRow is one fusion of ggml-et's graph_compute.
type FusionRow struct {
	Name        string
	Kernel      KernelInfo
	Constraints string
}

// opDoc is the declared part of a matrix row.
type opDoc struct {
	// kernels lists every kernel the op's kernel selector may return, in
	// the order ggml-et tries them.
	kernels     []string
	types       string
	constraints string
}

// opDocs holds the declared part of each op's row, keyed by op.
var opDocs = map[ops.Op]opDoc{
	ops.OpMulMat: {
		kernels: []string{"mul_mat_Q4_0_matrix_engine", "mul_mat_Q4_0", "mul_mat_Q8_0", "mul_mat_f16_matrix_engine",
			"mul_mat_f16", "mul_mat_f32_matrix_engine", "mul_mat_f32"},
		types:       "src0 f32, f16, q8_0, q4_0; src1 f32 (or f16 with float src0); dst f32",
		constraints: "element-sized nb0 and ordered dst strides; matrix engine when ne0, K, M % 16 (Q4_0: N >= 53, M % 16, K % 32)",
	},
	ops.OpAdd: {kernels: []string{"el_map_f32"}, types: "f32",
		constraints: "dst, src0 nb0 = 4; src1 nb0 = 4 or src1.ne0 = 1; dst rows contiguous"},
	ops.OpSub: {kernels: []string{"el_map_f32"}, types: "f32",
		constraints: "dst, src0 nb0 = 4; src1 nb0 = 4 or src1.ne0 = 1; dst rows contiguous"},
	ops.OpMul: {kernels: []string{"el_map_f32"}, types: "f32",
		constraints: "dst, src0 nb0 = 4; src1 nb0 = 4 or src1.ne0 = 1; dst rows contiguous"},
	ops.OpRMSNorm: {kernels: []string{"rms_norm_f32"}, types: "f32",
		constraints: "ne0 % 16; dst contiguous; src0 nb0 = 4"},
	ops.OpNorm: {kernels: []string{"norm_f32"}, types: "f32",
		constraints: "ne0 % 16; dst contiguous; src0 nb0 = 4"},
	ops.OpL2Norm: {kernels: []string{"l2_norm_f32"}, types: "f32",
		constraints: "ne0 % 16; dst contiguous; src0 nb0 = 4"},
	ops.OpScale: {kernels: []string{"scale_f32"}, types: "f32",
		constraints: "both contiguous; nelements % 16"},
	ops.OpSoftMax: {kernels: []string{"softmax_f32"}, types: "f32 (mask and sinks f32)",
		constraints: "dst, src0 contiguous; ne0 > 1; mask and sinks contiguous"},
	ops.OpRope: {kernels: []string{"rope_f32"}, types: "f32, pos i32",
		constraints: "dst contiguous; src0 nb0 = 4, no view offset; n_dims <= 512; normal, neox or imrope (n_dims % 16); no n_offs"},
	ops.OpUnary: {kernels: []string{"unary_f32"}, types: "f32",
		constraints: "nelements % 16; dst, src nb0 = 4; 21 sub-ops (no xielu)"},
	ops.OpGLU: {kernels: []string{"glu_f32"}, types: "f32",
		constraints: "nelements % 16; rows contiguous; split: equal ne0; fused: src0.ne0 = 2*dst.ne0"},
	ops.OpGetRows: {kernels: []string{"get_rows_f32"}, types: "src0 f32, f16, q4_0, q8_0, q4_K; rows i32; dst f32",
		constraints: "all contiguous; src0.ne2 = rows.ne1; rows.ne3 = 1"},
	ops.OpSetRows: {kernels: []string{"set_rows_f32"}, types: "src f32; idx i64; dst f32 or f16",
		constraints: "contiguous rows; idx contiguous; equal ne0; idx broadcasts; idx.ne3 = 1"},
	ops.OpCpy: {kernels: []string{"cont_f32", "cont_f16", "cpy_f32_f16"}, types: "f32→f32, f16→f16, f32→f16",
		constraints: "dst contiguous; 0 elements launch nothing"},
	ops.OpCont: {kernels: []string{"cont_f32", "cont_f16"}, types: "f32 or f16",
		constraints: "dst contiguous and not aliasing src"},
	ops.OpFlashAttnExt: {kernels: []string{"flash_attn_ext_f16_me", "flash_attn_ext_f32"},
		types:       "q f32; k, v f16; mask f16 or f32",
		constraints: "dk % 32; dk, dv <= 512; nhq % nhk; no sinks, ALiBi or softcap; rows with element nb0"},
	ops.OpView:      {types: "any", constraints: "skipped: no launch"},
	ops.OpReshape:   {types: "any", constraints: "skipped: no launch"},
	ops.OpPermute:   {types: "any", constraints: "skipped: no launch"},
	ops.OpTranspose: {types: "any", constraints: "skipped: no launch"},
	ops.OpSqr: {kernels: []string{"sqr_f32"}, types: "f32",
		constraints: "ne0 % 16; both contiguous"},
	ops.OpSumRows: {kernels: []string{"sum_rows_f32"}, types: "f32",
		constraints: "src0.ne0 % 16; src0 contiguous"},
	ops.OpMean: {kernels: []string{"mean_f32"}, types: "f32",
		constraints: "src0 contiguous"},
	ops.OpClamp: {kernels: []string{"clamp_f32"}, types: "f32",
		constraints: "both contiguous"},
	ops.OpCumsum: {kernels: []string{"cumsum_f32"}, types: "f32",
		constraints: "src0 nb0 = 4; dst contiguous"},
	ops.OpMulMatID: {kernels: []string{"mul_mat_id_Q8_0", "mul_mat_id_Q4_0", "mul_mat_id_f32"},
		types:       "as q8_0, q4_0, f16, f32; b f32; ids i32; dst f32",
		constraints: "element nb0; ordered dst strides; as, b 3-D; ids 2-D; ids.ne1 = b.ne2; ids.ne0 % b.ne1"},
	ops.OpGroupNorm: {kernels: []string{"group_norm_f32"}, types: "f32",
		constraints: "dst contiguous; src0 nb0 = 4; n_groups > 0"},
	ops.OpIm2col: {kernels: []string{"im2col"}, types: "data f32 → dst f32, or data f16/f32 → dst f16",
		constraints: "dst and data contiguous with element nb0"},
	ops.OpConv2D: {kernels: []string{"conv_2d_f32_me"}, types: "f32",
		constraints: "all contiguous; stride >= 1; dilation 1; Cin, Cout % 16; N = 1; L2 scratchpad budget"},
	ops.OpConcat: {kernels: []string{"concat_f32"}, types: "f32",
		constraints: "dst contiguous; dim >= 1: every ne0 % 16 and both sources contiguous"},
	ops.OpRepeat: {kernels: []string{"cont_f32", "repeat_f32"}, types: "f32",
		constraints: "both contiguous; same shape → cont_f32; else src0.ne0 1 or % 16, dst.ne0 % 16, whole repeats"},
	ops.OpPad: {kernels: []string{"pad_f32"}, types: "f32",
		constraints: "dst contiguous; ne0 % 16 or 16 % ne0; src0 nb0 = 4; no dim-0 padding; not circular"},
	ops.OpFill: {kernels: []string{"fill_f32"}, types: "f32",
		constraints: "contiguous; ne0 % 16"},
	ops.OpDiag: {kernels: []string{"diag_f32"}, types: "f32",
		constraints: "ne0 % 16; square result; src [N, 1, ...]; both contiguous"},
	ops.OpTri: {kernels: []string{"tri_f32"}, types: "f32",
		constraints: "both contiguous"},
	ops.OpSolveTri: {kernels: []string{"solve_tri_f32"}, types: "f32",
		constraints: "A square; A.ne1 = B.ne1; B.ne0 % 16; all contiguous; left, lower, non-unit"},
	ops.OpSet: {kernels: []string{"set_f32"}, types: "f32",
		constraints: "in place only; all contiguous; src1.ne0 % 16; view fits; nb1..nb3, offset % 64"},
	ops.OpSSMConv: {kernels: []string{"ssm_conv_f32"}, types: "f32",
		constraints: "dense rows; dst contiguous; ggml_ssm_conv shapes"},
	ops.OpSSMScan: {kernels: []string{"ssm_scan_f32"}, types: "f32, ids i32",
		constraints: "s, dt, A, ids contiguous; x, B, C dense rows; ggml_ssm_scan shapes"},
	ops.OpRWKVWKV6: {kernels: []string{"rwkv_wkv6_f32"}, types: "f32",
		constraints: "6 sources, all contiguous; head size % 8"},
	ops.OpRWKVWKV7: {kernels: []string{"rwkv_wkv7_f32"}, types: "f32",
		constraints: "7 sources, all contiguous; head size % 8"},
	ops.OpGatedDeltaNet: {kernels: []string{"gated_delta_net_f32"}, types: "f32",
		constraints: "S_v % 8; g scalar or per-element; beta scalar; q, k, v rows contiguous; g, beta, state contiguous"},
}

// fusionDocs are the constraint lines of the fusions, by name.
var fusionDocs = map[string]struct{ kernel, constraints string }{
	FusionRMSNormMul: {"rms_norm_mul_f32", "all f32; norm input contiguous; weights rows contiguous; ne0 % 16; no dim-0 broadcast"},
	FusionMulMatAdd:  {"mul_mat_Q8_0", "q8_0 × f32 mul_mat; bias f32 with mul_mat's shape and the add's strides; contiguous"},
}

func kernelInfo(m *abi.Manifest, name string) KernelInfo {
	k := KernelInfo{Name: name}
	if l, ok := m.LayoutFor(name); ok {
		k.Layout, k.ParamsBytes = l.Name, l.Size
	}
	k.UberkernelID, k.Batchable = m.UberkernelID(name)
	return k
}

// SupportMatrix returns one row per catalog op, in catalog order. m
// defaults to the embedded manifest.
func SupportMatrix(m *abi.Manifest) []OpRow {
	if m == nil {
		m = abi.Default()
	}
	rows := make([]OpRow, 0, len(ops.Catalog))
	for i := range ops.Catalog {
		info := &ops.Catalog[i]
		_, modelled := ruleFor(info.Name)
		r := OpRow{
			Op: info.Name, GGML: strings.ToUpper(string(info.Name)), View: info.View,
			Implemented: ggmlETOps[info.Name] || info.View,
			Modelled:    modelled || info.View,
			HostMath:    info.HostMath || info.View,
			Uberkernel:  "-",
		}
		if d, ok := opDocs[info.Name]; ok && r.Implemented {
			r.Types, r.Constraints = d.types, d.constraints
			batch := 0
			for _, k := range d.kernels {
				ki := kernelInfo(m, k)
				if ki.Batchable {
					batch++
				}
				r.Kernels = append(r.Kernels, ki)
			}
			switch {
			case len(d.kernels) == 0:
			case batch == len(d.kernels):
				r.Uberkernel = "yes"
			case batch == 0:
				r.Uberkernel = "no"
			default:
				r.Uberkernel = "partly"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// SubOpMatrix lists every unary and GLU sub-op of the catalog (unary
// first, then GLU, each sorted by name) and whether ggml-et accepts it.
func SubOpMatrix() []SubOpRow {
	var rows []SubOpRow
	add := func(op ops.Op, names []string, accepted map[string]bool) {
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		for _, n := range sorted {
			rows = append(rows, SubOpRow{Op: op, Name: n, Supported: accepted[n]})
		}
	}
	add(ops.OpUnary, ops.UnaryOps, unaryAccepted)
	add(ops.OpGLU, ops.GLUOps, gluAccepted)
	return rows
}

// FusionMatrix lists ggml-et's fusions in the order graph_compute tries
// them.
func FusionMatrix(m *abi.Manifest) []FusionRow {
	if m == nil {
		m = abi.Default()
	}
	rows := make([]FusionRow, 0, len(fusions))
	for _, f := range fusions {
		d := fusionDocs[f.name]
		rows = append(rows, FusionRow{Name: f.name, Kernel: kernelInfo(m, d.kernel), Constraints: d.constraints})
	}
	return rows
}

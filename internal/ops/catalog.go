package ops

import (
	"fmt"
	"strings"
)

// Op is an op name as case files write it: the ggml op name in lower case
// (reference/case-format.md §1): "mul_mat", "add", "rms_norm", "rope" ...
type Op string

// The ops in the catalog.
const (
	OpMulMat       Op = "mul_mat"
	OpAdd          Op = "add"
	OpSub          Op = "sub"
	OpMul          Op = "mul"
	OpRMSNorm      Op = "rms_norm"
	OpNorm         Op = "norm"
	OpL2Norm       Op = "l2_norm"
	OpScale        Op = "scale"
	OpSoftMax      Op = "soft_max"
	OpRope         Op = "rope"
	OpUnary        Op = "unary"
	OpGLU          Op = "glu"
	OpGetRows      Op = "get_rows"
	OpSetRows      Op = "set_rows"
	OpCpy          Op = "cpy"
	OpCont         Op = "cont"
	OpFlashAttnExt Op = "flash_attn_ext"
	OpView         Op = "view"
	OpReshape      Op = "reshape"
	OpPermute      Op = "permute"
	OpTranspose    Op = "transpose"

	OpSqr           Op = "sqr"
	OpSumRows       Op = "sum_rows"
	OpMean          Op = "mean"
	OpClamp         Op = "clamp"
	OpCumsum        Op = "cumsum"
	OpMulMatID      Op = "mul_mat_id"
	OpGroupNorm     Op = "group_norm"
	OpIm2col        Op = "im2col"
	OpConv2D        Op = "conv_2d"
	OpConcat        Op = "concat"
	OpRepeat        Op = "repeat"
	OpPad           Op = "pad"
	OpFill          Op = "fill"
	OpDiag          Op = "diag"
	OpTri           Op = "tri"
	OpSolveTri      Op = "solve_tri"
	OpSet           Op = "set"
	OpSSMConv       Op = "ssm_conv"
	OpSSMScan       Op = "ssm_scan"
	OpRWKVWKV6      Op = "rwkv_wkv6"
	OpRWKVWKV7      Op = "rwkv_wkv7"
	OpGatedDeltaNet Op = "gated_delta_net"
)

// InferFunc gives the type and shape of an op's result from its sources
// and normalized params, or an error (a *ShapeError or *ParamError) that
// says which source or parameter is wrong and why.
type InferFunc func(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error)

// ViewFunc builds the result of a view op (view, reshape, permute,
// transpose): a Tensor sharing its source's buffer.
type ViewFunc func(src *Tensor, p Params) (*Tensor, error)

// Cost is what one execution of an op costs, for perf reports. Following
// test-backend-ops (reference/ggml-et-backend.md §6.4), Flops is non-zero
// only for the ops whose test class has an op_flops (mul_mat, mul_mat_id,
// conv_2d, conv_3d, flash_attn_ext, lightning_indexer); every other op is
// reported as bandwidth over Bytes = nbytes(dst) + Σ nbytes(src).
type Cost struct {
	Flops int64
	Bytes int64
}

// OpInfo is one row of the op catalog: everything generic code needs to
// parse, check, run and cost an op. Adding an op is one row, one params
// layout (Params) and one reference function (package refmath).
type OpInfo struct {
	Name Op
	// Doc is a one-line description.
	Doc string
	// Srcs names the sources in case-file order (reference/case-format.md
	// §1); MinSrc..len(Srcs) sources are accepted.
	Srcs   []string
	MinSrc int
	Params []ParamSpec
	// View ops produce a view of their source (no computation, no
	// launch); they have View set and a ViewFunc instead of reference
	// math.
	View   bool
	Infer  InferFunc
	ViewOf ViewFunc
	// HostMath says that the op has reference math on the host (package
	// refmath runs it); an op without it reports a *NoHostMathError.
	HostMath bool
	// Flops, when set, counts floating-point operations for perf reports.
	Flops func(dst *Tensor, srcs []*Tensor, p Params) int64
	// InPlace says that the reference math computes the in-place result when dst is its
	// first source itself (same storage, offset, type, shape and
	// strides) and no other source shares dst's storage: set_rows
	// replaces whole rows with rows of another tensor. Such a launch
	// needs no scratch copy of dst (see driver/ref's runAliased).
	InPlace bool
}

// MaxSrc is the largest number of sources the op accepts.
func (info *OpInfo) MaxSrc() int { return len(info.Srcs) }

// Catalog lists every op et knows, in a stable order: the ops ggml-et
// implements, then the ones it does not (hostCatalog, catalog_host.go).
var Catalog = append([]OpInfo{
	{
		Name: OpMulMat, Doc: "matrix product: dst[m, n] = Σ_k a[k, m]·b[k, n], b broadcast over a in dims 2 and 3",
		Srcs: []string{"a", "b"}, MinSrc: 2,
		Infer: inferMulMat, HostMath: true, Flops: flopsMulMat,
	},
	{
		Name: OpAdd, Doc: "a + b, b repeated over a",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferBinary(OpAdd), HostMath: true,
	},
	{
		Name: OpSub, Doc: "a - b, b repeated over a",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferBinary(OpSub), HostMath: true,
	},
	{
		Name: OpMul, Doc: "a * b, b repeated over a",
		Srcs: []string{"a", "b"}, MinSrc: 2, Infer: inferBinary(OpMul), HostMath: true,
	},
	{
		Name: OpRMSNorm, Doc: "x / sqrt(mean(x²) + eps) per row",
		Srcs: []string{"x"}, MinSrc: 1, Params: []ParamSpec{epsSpec}, Infer: inferNorm(OpRMSNorm), HostMath: true,
	},
	{
		Name: OpNorm, Doc: "(x - mean) / sqrt(var + eps) per row",
		Srcs: []string{"x"}, MinSrc: 1, Params: []ParamSpec{epsSpec}, Infer: inferNorm(OpNorm), HostMath: true,
	},
	{
		Name: OpL2Norm, Doc: "x / max(‖x‖, eps) per row",
		Srcs: []string{"x"}, MinSrc: 1, Params: []ParamSpec{epsSpec}, Infer: inferNorm(OpL2Norm), HostMath: true,
	},
	{
		Name: OpScale, Doc: "x*scale + bias",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "scale", Kind: KindFloat, Default: 1.0, Doc: "multiplier"},
			{Name: "bias", Kind: KindFloat, Default: 0.0, Doc: "added after scaling (0 for plain ggml_scale)"},
		},
		Infer: inferScale, HostMath: true,
	},
	{
		Name: OpSoftMax, Doc: "softmax(x*scale + slope*mask) per row, with optional attention sinks",
		Srcs: []string{"x", "mask", "sinks"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "scale", Kind: KindFloat, Default: 1.0, Doc: "multiplier applied to x"},
			{Name: "max_bias", Kind: KindFloat, Default: 0.0, Doc: "ALiBi maximum bias (0 = no ALiBi)"},
			sinksSpec,
		},
		Infer: inferSoftMax, HostMath: true,
	},
	{
		Name: OpRope, Doc: "rotary position embedding (normal, neox, mrope, vision, imrope) with YaRN",
		Srcs: []string{"x", "pos", "freq_factors"}, MinSrc: 2,
		Params: []ParamSpec{
			{Name: "n_dims", Kind: KindInt, Required: true, Doc: "number of rotated dimensions, even, <= ne0"},
			{Name: "mode", Kind: KindEnum, Default: "normal", Enum: RopeModes, Doc: "rotation layout"},
			{Name: "n_ctx_orig", Kind: KindInt, Default: int64(0), Doc: "original context length (YaRN)"},
			{Name: "freq_base", Kind: KindFloat, Default: 10000.0, Doc: "frequency base"},
			{Name: "freq_scale", Kind: KindFloat, Default: 1.0, Doc: "frequency scale (1/context extension factor)"},
			{Name: "ext_factor", Kind: KindFloat, Default: 0.0, Doc: "YaRN extrapolation mix (0 = off)"},
			{Name: "attn_factor", Kind: KindFloat, Default: 1.0, Doc: "magnitude scale"},
			{Name: "beta_fast", Kind: KindFloat, Default: 32.0, Doc: "YaRN low correction dim"},
			{Name: "beta_slow", Kind: KindFloat, Default: 1.0, Doc: "YaRN high correction dim"},
			{Name: "sections", Kind: KindInts, MinLen: 4, MaxLen: 4, Default: []int64{0, 0, 0, 0}, Doc: "mrope, vision and imrope sections [t, h, w, e]"},
			{Name: "n_offs", Kind: KindInt, Default: int64(0), Doc: "first rotated dimension (ggml_rope_set_offset), even"},
		},
		Infer: InferRope, HostMath: true,
	},
	{
		Name: OpUnary, Doc: "elementwise unary function",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "op", Kind: KindEnum, Required: true, Enum: UnaryOps, Doc: "unary op: " + strings.Join(UnaryOps, ", ")}},
		Infer:  inferUnary, HostMath: true,
	},
	{
		Name: OpGLU, Doc: "gated linear unit: f(a)*b, on the halves of x or on [a, b]",
		Srcs: []string{"a", "b"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "op", Kind: KindEnum, Required: true, Enum: GLUOps, Doc: "glu op: " + strings.Join(GLUOps, ", ")},
			{Name: "swapped", Kind: KindBool, Default: false, Doc: "single-tensor form: gate on the first half"},
			{Name: "alpha", Kind: KindFloat, Default: 1.702, Doc: "swiglu_oai sigmoid scale"},
			{Name: "limit", Kind: KindFloat, Default: 7.0, Doc: "swiglu_oai clamp limit"},
		},
		Infer: inferGLU, HostMath: true,
	},
	{
		Name: OpGetRows, Doc: "gather rows of data by i32 indices, dequantized to f32",
		Srcs: []string{"data", "rows"}, MinSrc: 2, Infer: inferGetRows, HostMath: true,
	},
	{
		Name: OpSetRows, Doc: "dst with rows replaced by src rows at i64/i32 indices",
		Srcs: []string{"dst", "src", "idx"}, MinSrc: 3, Infer: inferSetRows, HostMath: true, InPlace: true,
	},
	{
		Name: OpCpy, Doc: "copy with type conversion (quantizes with ggml's reference quantizers), optionally into dst",
		Srcs: []string{"x", "dst"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "type", Kind: KindType, Required: true, Doc: "destination type, e.g. f16"}},
		Infer:  inferCpy, HostMath: true,
	},
	{
		Name: OpCont, Doc: "contiguous copy of a view",
		Srcs: []string{"view"}, MinSrc: 1, Infer: inferCont, HostMath: true,
	},
	{
		Name: OpFlashAttnExt, Doc: "fused attention softmax(q·k*scale + mask)·v; dst is [d_v, n_head, n_q, n_batch]",
		Srcs: []string{"q", "k", "v", "mask", "sinks"}, MinSrc: 3,
		Params: []ParamSpec{
			{Name: "scale", Kind: KindFloat, Required: true, Doc: "KQ scale, usually 1/sqrt(d_k)"},
			{Name: "max_bias", Kind: KindFloat, Default: 0.0, Doc: "ALiBi maximum bias (0 = no ALiBi)"},
			{Name: "logit_softcap", Kind: KindFloat, Default: 0.0, Doc: "softcap*tanh(s/softcap) on the logits (0 = off)"},
			sinksSpec,
		},
		Infer: inferFlashAttn, HostMath: true, Flops: flopsFlashAttn,
	},
	{
		Name: OpView, Doc: "strided view (ggml_view_4d)", View: true,
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "ne", Kind: KindInts, Required: true, MinLen: 1, MaxLen: 4, Doc: "view shape"},
			{Name: "nb", Kind: KindInts, MinLen: 0, MaxLen: 3, Default: []int64{}, Doc: "byte strides of dims 1..3"},
			{Name: "offset", Kind: KindInt, Default: int64(0), Doc: "byte offset"},
		},
		ViewOf: viewView,
	},
	{
		Name: OpReshape, Doc: "new shape of a contiguous tensor", View: true,
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "ne", Kind: KindInts, Required: true, MinLen: 1, MaxLen: 4, Doc: "new shape"}},
		ViewOf: viewReshape,
	},
	{
		Name: OpPermute, Doc: "ggml_permute: source dim i becomes result dim axes[i]", View: true,
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "axes", Kind: KindInts, Required: true, MinLen: 4, MaxLen: 4, Doc: "permutation of 0..3"}},
		ViewOf: viewPermute,
	},
	{
		Name: OpTranspose, Doc: "swap dims 0 and 1", View: true,
		Srcs: []string{"x"}, MinSrc: 1, ViewOf: viewTranspose,
	},
	{
		Name: OpSqr, Doc: "x² elementwise",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferSqr, HostMath: true,
	},
	{
		Name: OpSumRows, Doc: "Σ of each row: [ne0, ...] -> [1, ...]",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferSumRows(OpSumRows), HostMath: true,
	},
	{
		Name: OpMean, Doc: "mean of each row: [ne0, ...] -> [1, ...]",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferSumRows(OpMean), HostMath: true,
	},
	{
		Name: OpClamp, Doc: "min(max(x, min), max) elementwise",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "min", Kind: KindFloat, Required: true, Doc: "lower bound"},
			{Name: "max", Kind: KindFloat, Required: true, Doc: "upper bound"},
		},
		Infer: inferClamp, HostMath: true,
	},
	{
		Name: OpCumsum, Doc: "running sum along ne0",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferCumsum, HostMath: true,
	},
	{
		Name: OpMulMatID, Doc: "MoE expert matmul: dst[:, e, t] = as[:, :, ids[e, t]]·b[:, e % b.ne1, t]",
		Srcs: []string{"as", "b", "ids"}, MinSrc: 3,
		Infer: inferMulMatID, HostMath: true, Flops: flopsMulMatID,
	},
	{
		Name: OpGroupNorm, Doc: "(x - mean) / sqrt(var + eps) over groups of channels (ne2)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "n_groups", Kind: KindInt, Required: true, Doc: "number of channel groups"},
			epsSpec,
		},
		Infer: inferGroupNorm, HostMath: true,
	},
	{
		Name: OpIm2col, Doc: "convolution patches of data for kernel's shape: [IC·KH·KW, OW, OH, N]",
		Srcs: []string{"kernel", "data"}, MinSrc: 2,
		Params: append(convSpecs(),
			ParamSpec{Name: "is_2d", Kind: KindBool, Default: true, Doc: "2-D patches (false: 1-D, s1/p1/d1 unused)"},
			ParamSpec{Name: "dst_type", Kind: KindType, Default: F32, Doc: "result type, f32 or f16"},
		),
		Infer: inferIm2col, HostMath: true,
	},
	{
		Name: OpConv2D, Doc: "direct 2-D convolution: kernel [KW, KH, IC, OC] * input [W, H, IC, N] -> [OW, OH, OC, N]",
		Srcs: []string{"kernel", "input"}, MinSrc: 2, Params: convSpecs(),
		Infer: inferConv2D, HostMath: true, Flops: flopsConv2D,
	},
	{
		Name: OpConcat, Doc: "a and b joined along dim",
		Srcs: []string{"a", "b"}, MinSrc: 2,
		Params: []ParamSpec{{Name: "dim", Kind: KindInt, Default: int64(0), Doc: "dimension to join along, 0 to 3"}},
		Infer:  inferConcat, HostMath: true,
	},
	{
		Name: OpRepeat, Doc: "x tiled to shape ne (ggml_repeat_4d)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "ne", Kind: KindInts, Required: true, MinLen: 1, MaxLen: 4, Doc: "target shape, each a multiple of x's"}},
		Infer:  inferRepeat, HostMath: true,
	},
	{
		Name: OpPad, Doc: "zero (or circular) padding before (lp) and after (rp) each dim (ggml_pad_ext)",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{
			{Name: "lp", Kind: KindInts, MinLen: 4, MaxLen: 4, Default: []int64{0, 0, 0, 0}, Doc: "zeros before, per dim in ne order"},
			{Name: "rp", Kind: KindInts, MinLen: 4, MaxLen: 4, Default: []int64{0, 0, 0, 0}, Doc: "zeros after, per dim in ne order"},
			{Name: "circular", Kind: KindBool, Default: false, Doc: "wrap around instead of zeros (ggml_pad_ext_circular)"},
		},
		Infer: inferPad, HostMath: true,
	},
	{
		Name: OpFill, Doc: "x's shape filled with c",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "c", Kind: KindFloat, Default: 0.0, Doc: "fill value"}},
		Infer:  inferFill, HostMath: true,
	},
	{
		Name: OpDiag, Doc: "diagonal matrix from a vector: [N, 1, ...] -> [N, N, ...]",
		Srcs: []string{"x"}, MinSrc: 1, Infer: inferDiag, HostMath: true,
	},
	{
		Name: OpTri, Doc: "one triangle of a square matrix, zeros elsewhere",
		Srcs: []string{"x"}, MinSrc: 1,
		Params: []ParamSpec{{Name: "type", Kind: KindEnum, Default: "lower", Enum: TriTypes, Doc: "lower (i0 < i1), lower_diag, upper (i0 > i1) or upper_diag"}},
		Infer:  inferTri, HostMath: true,
	},
	{
		Name: OpSolveTri, Doc: "X with A·X = B, A lower-triangular [n, n], B [k, n]",
		Srcs: []string{"a", "b"}, MinSrc: 2,
		Params: []ParamSpec{
			{Name: "left", Kind: KindBool, Default: true, Doc: "solve A·X = B (ggml implements only true)"},
			{Name: "lower", Kind: KindBool, Default: true, Doc: "A lower-triangular (ggml implements only true)"},
			{Name: "uni", Kind: KindBool, Default: false, Doc: "unit diagonal (ggml implements only false)"},
		},
		Infer: inferSolveTri, HostMath: true,
	},
	{
		Name: OpSet, Doc: "a with b written into a strided view of it (ggml_set)",
		Srcs: []string{"a", "b"}, MinSrc: 2,
		Params: []ParamSpec{
			{Name: "nb1", Kind: KindInt, Default: int64(0), Doc: "view byte stride of dim 1 (0: a's)"},
			{Name: "nb2", Kind: KindInt, Default: int64(0), Doc: "view byte stride of dim 2 (0: a's)"},
			{Name: "nb3", Kind: KindInt, Default: int64(0), Doc: "view byte stride of dim 3 (0: a's)"},
			{Name: "offset", Kind: KindInt, Default: int64(0), Doc: "view byte offset into a"},
			{Name: "inplace", Kind: KindBool, Default: true, Doc: "write into a itself (ggml_set_inplace; the only form ggml-et runs)"},
		},
		Infer: inferSet, HostMath: true,
	},
	{
		Name: OpSSMConv, Doc: "Mamba depthwise causal conv: sx [d_conv-1+n_t, d_inner, n_s] * c [d_conv, d_inner]",
		Srcs: []string{"sx", "c"}, MinSrc: 2, Infer: inferSSMConv, HostMath: true,
	},
	{
		Name: OpSSMScan, Doc: "Mamba selective scan; 1-D result: y, then K state snapshots",
		Srcs: []string{"s", "x", "dt", "A", "B", "C", "ids"}, MinSrc: 7,
		Params: []ParamSpec{{Name: "K", Kind: KindInt, Default: int64(1), Doc: "state snapshot slots (1 = final state only)"}},
		Infer:  inferSSMScan, HostMath: true,
	},
	{
		Name: OpRWKVWKV6, Doc: "RWKV-6 time mixing; result [S·H, T + S·n_seqs]: y rows, then new state",
		Srcs: []string{"k", "v", "r", "tf", "td", "state"}, MinSrc: 6, Infer: inferWKV6, HostMath: true,
	},
	{
		Name: OpRWKVWKV7, Doc: "RWKV-7 time mixing; result [S·H, T + S·n_seqs]: y rows, then new state",
		Srcs: []string{"r", "w", "k", "v", "a", "b", "state"}, MinSrc: 7, Infer: inferWKV7, HostMath: true,
	},
	{
		Name: OpGatedDeltaNet, Doc: "gated delta rule (Qwen3-Next); result [S_v·H, T·n_seqs + K·S_v·n_seqs]",
		Srcs: []string{"q", "k", "v", "g", "beta", "state"}, MinSrc: 6,
		Params: []ParamSpec{{Name: "K", Kind: KindInt, Default: int64(1), Doc: "state snapshot slots (1 = final state only)"}},
		Infer:  inferGatedDeltaNet, HostMath: true,
	},
}, HostCatalog...)

// sinksSpec is soft_max's and flash_attn_ext's "sinks" flag: the last
// source is the attention sinks. It is needed only when there is no mask
// (ggml's src[1] resp. src[3] is NULL and the sinks are the next source);
// with every source given, the last one is the sinks anyway.
var sinksSpec = ParamSpec{Name: "sinks", Kind: KindBool, Default: false, Doc: "the last source is the attention sinks (f32 [n_head]); needed only without a mask"}

// MaskSinks gives the source indices of the mask and the sinks of a
// soft_max (fixed = 1: x) or flash_attn_ext (fixed = 3: q, k, v) node with
// n sources, -1 for an absent one: with two optional sources they are
// [mask, sinks]; with one, it is the sinks if the sinks param is set and
// the mask otherwise.
func MaskSinks(fixed, n int, p Params) (mask, sinks int) {
	switch n - fixed {
	case 2:
		return fixed, fixed + 1
	case 1:
		if p.Has("sinks") && p.Bool("sinks") {
			return -1, fixed
		}
		return fixed, -1
	}
	return -1, -1
}

func MaskSinkTensors(fixed int, srcs []*Tensor, p Params) (mask, sinks *Tensor) {
	m, s := MaskSinks(fixed, len(srcs), p)
	if m >= 0 {
		mask = srcs[m]
	}
	if s >= 0 {
		sinks = srcs[s]
	}
	return mask, sinks
}

var epsSpec = ParamSpec{Name: "eps", Kind: KindFloat, Default: 1e-6, Doc: "added to the variance (default 1e-6, test-backend-ops' default)"}

// convSpecs are the stride, padding and dilation parameters of im2col and
// conv_2d (index 0 is x/width, index 1 is y/height).
func convSpecs() []ParamSpec {
	return []ParamSpec{
		{Name: "s0", Kind: KindInt, Default: int64(1), Doc: "stride along x"},
		{Name: "s1", Kind: KindInt, Default: int64(1), Doc: "stride along y"},
		{Name: "p0", Kind: KindInt, Default: int64(0), Doc: "zero padding along x"},
		{Name: "p1", Kind: KindInt, Default: int64(0), Doc: "zero padding along y"},
		{Name: "d0", Kind: KindInt, Default: int64(1), Doc: "dilation along x"},
		{Name: "d1", Kind: KindInt, Default: int64(1), Doc: "dilation along y"},
	}
}

// Lookup finds an op by name (case-insensitive).
func Lookup(name string) (*OpInfo, bool) {
	for i := range Catalog {
		if strings.EqualFold(string(Catalog[i].Name), name) {
			return &Catalog[i], true
		}
	}
	return nil, false
}

// UnknownOpError is an op name that is not in the catalog.
type UnknownOpError struct{ Name string }

func (e *UnknownOpError) Error() string {
	names := make([]string, len(Catalog))
	for i := range Catalog {
		names[i] = string(Catalog[i].Name)
	}
	return fmt.Sprintf("unknown op %q (want one of %s)", e.Name, strings.Join(names, ", "))
}

// InputError marks UnknownOpError as bad user input.
func (e *UnknownOpError) InputError() {}

// ShapeError is a source of the wrong type or shape for an op. It is an
// input error (exit code 2).
type ShapeError struct {
	Op  Op
	Msg string
}

func (e *ShapeError) Error() string { return fmt.Sprintf("%s: %s", e.Op, e.Msg) }

// InputError marks ShapeError as bad user input.
func (e *ShapeError) InputError() {}

func ShapeErr(op Op, format string, args ...any) error {
	return &ShapeError{Op: op, Msg: fmt.Sprintf(format, args...)}
}

// NoHostMathError says that et has no reference math for an op, a
// variant of an op or a type (ggml's CPU has it; et does not yet). A run
// reports such a case as skipped with the reason, as test-backend-ops
// reports "not supported"; it is neither a failure nor bad input.
type NoHostMathError struct {
	// What names what has no host math: "op OUT_PROD", "type iq2_xxs",
	// "rope mode 24".
	What string
}

func (e *NoHostMathError) Error() string { return "no host math for " + e.What }

// CheckSources checks the number of sources and that none is nil.
func (info *OpInfo) CheckSources(srcs []*Tensor) error {
	if len(srcs) < info.MinSrc || len(srcs) > len(info.Srcs) {
		want := fmt.Sprintf("%d", info.MinSrc)
		if len(info.Srcs) != info.MinSrc {
			want = fmt.Sprintf("%d to %d", info.MinSrc, len(info.Srcs))
		}
		return ShapeErr(info.Name, "%d sources, want %s [%s]", len(srcs), want, strings.Join(info.Srcs, ", "))
	}
	for i, s := range srcs {
		if s == nil {
			return ShapeErr(info.Name, "source %s is missing", info.Srcs[i])
		}
		for d, n := range s.Ne {
			if n < 0 {
				return ShapeErr(info.Name, "source %s has a negative ne%d = %d", info.Srcs[i], d, n)
			}
		}
		if bs := int64(s.Type.BlockSize()); s.Ne[0]%bs != 0 {
			return ShapeErr(info.Name, "source %s: ne0 = %d is not a multiple of the %s block size %d", info.Srcs[i], s.Ne[0], s.Type, bs)
		}
	}
	return nil
}

// Shape checks the sources and gives the result's type and shape. For a
// view op it builds the view to check it.
func (info *OpInfo) Shape(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	if err := info.CheckSources(srcs); err != nil {
		return 0, [MaxDims]int64{}, err
	}
	if info.View {
		v, err := info.ViewOf(srcs[0], p)
		if err != nil {
			return 0, [MaxDims]int64{}, err
		}
		return v.Type, v.Ne, nil
	}
	return info.Infer(srcs, p)
}

// NewResult allocates the zeroed contiguous result of the op on srcs
// with the normalized params p (for a view op: the view itself), after
// the catalog's checks: the sources, the result's type and shape
// (Shape), that the op has host math and that every type has a host
// codec. The reference math then computes into it.
func (info *OpInfo) NewResult(srcs []*Tensor, p Params) (*Tensor, error) {
	if info.View {
		if err := info.CheckSources(srcs); err != nil {
			return nil, err
		}
		return info.ViewOf(srcs[0], p)
	}
	t, ne, err := info.Shape(srcs, p)
	if err != nil {
		return nil, err
	}
	if !info.HostMath {
		return nil, &NoHostMathError{What: "op " + strings.ToUpper(string(info.Name))}
	}
	if err := CodecsOf(t, srcs); err != nil {
		return nil, err
	}
	return New(t, ne[:]...), nil
}

// Cost counts the flops and bytes of one execution of the op.
func (info *OpInfo) Cost(dst *Tensor, srcs []*Tensor, p Params) Cost {
	var c Cost
	if dst != nil {
		c.Bytes += int64(dst.NBytes())
	}
	for _, s := range srcs {
		if s != nil {
			c.Bytes += int64(s.NBytes())
		}
	}
	if info.Flops != nil {
		c.Flops = info.Flops(dst, srcs, p)
	}
	return c
}

func ShapeString(ne [MaxDims]int64) string {
	return fmt.Sprintf("[%d, %d, %d, %d]", ne[0], ne[1], ne[2], ne[3])
}

// --- mul_mat (the math is MulMat in mulmat.go) ---

func inferMulMat(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if b.Type != F32 && b.Type != F16 {
		return 0, [MaxDims]int64{}, ShapeErr(OpMulMat, "b is %s, want f32 or f16", b.Type)
	}
	if a.Type.Integer() {
		return 0, [MaxDims]int64{}, ShapeErr(OpMulMat, "a is %s, want a float or quantized type", a.Type)
	}
	if a.Ne[0] != b.Ne[0] {
		return 0, [MaxDims]int64{}, ShapeErr(OpMulMat, "a.ne0 = %d != b.ne0 = %d (the shared dimension k)", a.Ne[0], b.Ne[0])
	}
	for d := 2; d < MaxDims; d++ {
		if a.Ne[d] == 0 || b.Ne[d]%a.Ne[d] != 0 {
			return 0, [MaxDims]int64{}, ShapeErr(OpMulMat, "b.ne%d = %d is not a multiple of a.ne%d = %d (a is broadcast over b)", d, b.Ne[d], d, a.Ne[d])
		}
	}
	return F32, [MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}, nil
}

func flopsMulMat(dst *Tensor, srcs []*Tensor, _ Params) int64 {
	a, b := srcs[0], srcs[1]
	return 2 * a.Ne[0] * a.Ne[1] * b.Ne[1] * b.Ne[2] * b.Ne[3]
}

// --- view ops (the views themselves are built by access.go) ---

func viewView(x *Tensor, p Params) (*Tensor, error) {
	ne := p.Ints("ne")
	nbs := p.Ints("nb")
	nb := make([]uint64, len(nbs))
	for i, v := range nbs {
		if v < 0 {
			return nil, &ParamError{Op: OpView, Param: "nb", Msg: fmt.Sprintf("negative stride %d", v)}
		}
		nb[i] = uint64(v)
	}
	off := p.Int("offset")
	if off < 0 {
		return nil, &ParamError{Op: OpView, Param: "offset", Msg: fmt.Sprintf("negative offset %d", off)}
	}
	v, err := View(x, ne, nb, uint64(off))
	if err != nil {
		return nil, &ShapeError{Op: OpView, Msg: strings.TrimPrefix(err.Error(), "view: ")}
	}
	return v, nil
}

func viewReshape(x *Tensor, p Params) (*Tensor, error) {
	v, err := Reshape(x, p.Ints("ne")...)
	if err != nil {
		return nil, &ShapeError{Op: OpReshape, Msg: strings.TrimPrefix(err.Error(), "reshape: ")}
	}
	return v, nil
}

func viewPermute(x *Tensor, p Params) (*Tensor, error) {
	a := p.Ints("axes")
	if len(a) != 4 {
		return nil, &ParamError{Op: OpPermute, Param: "axes", Msg: fmt.Sprintf("has %d entries, want 4", len(a))}
	}
	v, err := Permute(x, int(a[0]), int(a[1]), int(a[2]), int(a[3]))
	if err != nil {
		return nil, &ShapeError{Op: OpPermute, Msg: strings.TrimPrefix(err.Error(), "permute: ")}
	}
	return v, nil
}

func viewTranspose(x *Tensor, _ Params) (*Tensor, error) { return Transpose(x), nil }

// --- shared helpers of the reference functions ---

// RowIndex splits a flat row number r of a tensor with shape ne into
// (i1, i2, i3).
func RowIndex(ne [MaxDims]int64, r int64) (i1, i2, i3 int64) {
	i1 = r % ne[1]
	r /= ne[1]
	i2 = r % ne[2]
	i3 = r / ne[2]
	return
}

// isFloatType reports whether t holds real numbers (f32, f16 or a
// quantized type), as opposed to integer indices.
func isFloatType(t Type) bool { return !t.Integer() }

func wantTypes(op Op, what string, t Type, allowed ...Type) error {
	for _, a := range allowed {
		if t == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = a.String()
	}
	return ShapeErr(op, "%s is %s, want %s", what, t, strings.Join(names, " or "))
}

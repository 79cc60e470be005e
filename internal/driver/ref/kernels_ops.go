package ref

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// opKernel describes a kernel that is exactly one op of the catalog: the
// params fields that carry the op's sources, in the op's source order,
// with the types the kernel accepts; the result field; and how the op's
// params come from the struct's scalars (and, for im2col and conv_2d, from
// the dst's op_params, which those kernels read).
type opKernel struct {
	op     ops.Op
	srcs   []string
	types  [][]ops.Type
	dst    string
	dstT   []ops.Type
	params func(v abi.Values, dst abi.TensorDesc) map[string]any
	// inPlace passes the result tensor as the op's first source (set_f32
	// and set_rows_f32: dst is ggml's a, written in place; fill_f32: dst
	// supplies the shape).
	inPlace bool
	// enum, when set, names a sub-op through the manifest (unary_op,
	// tri_type).
	enum *enumField
	// flat: the kernel writes a contiguous dst in src0's element order,
	// whatever dst's shape (the copy kernels: ggml_cpy into a tensor of
	// another shape with the same element count is a reshape).
	flat bool
}

// enumField is an int32 params field holding a ggml enum value, passed to
// the op as the lower-case name the manifest gives it.
type enumField struct {
	field, param, what string
	name               func(*abi.Manifest, int32) (string, bool)
}

// epsParam is the params of the norm kernels {src0, dst, eps}.
func epsParam(v abi.Values, _ abi.TensorDesc) map[string]any {
	return map[string]any{"eps": v.Float("eps")}
}

// copyKernel is cont_f32, cont_f16 (op cont) and cpy_f32_f16 (op cpy to
// f16) {src0, dst}.
func copyKernel(op ops.Op, from, to ops.Type) opKernel {
	k := opKernel{op: op, srcs: []string{"src0"}, types: [][]ops.Type{{from}}, dstT: []ops.Type{to}, flat: true}
	if op == ops.OpCpy {
		k.params = func(abi.Values, abi.TensorDesc) map[string]any { return map[string]any{"type": to.String()} }
	}
	return k
}

// opKernels are the kernels (reference ggml-et-backend.md §1.2) that map
// one to one onto an op of the catalog; kernelTable has the others. A
// catalog without the op (an older ops package) makes the kernel report
// "no reference implementation yet".
var opKernels = map[string]opKernel{
	"rms_norm_f32": {op: ops.OpRMSNorm, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}, params: epsParam},
	"norm_f32":     {op: ops.OpNorm, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}, params: epsParam},
	"l2_norm_f32":  {op: ops.OpL2Norm, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}, params: epsParam},
	"scale_f32": {op: ops.OpScale, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"scale": v.Float("scale"), "bias": v.Float("bias")}
		}},
	"unary_f32": {op: ops.OpUnary, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		enum: &enumField{field: "unary_op", param: "op", what: "GGML_UNARY_OP", name: (*abi.Manifest).UnaryName}},
	"tri_f32": {op: ops.OpTri, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		enum: &enumField{field: "tri_type", param: "type", what: "GGML_TRI_TYPE", name: (*abi.Manifest).TriName}},
	// get_rows_f32 dequantizes q4_0, q8_0 and q4_K data.
	"get_rows_f32": {op: ops.OpGetRows, srcs: []string{"src0", "src1"}, types: [][]ops.Type{getRowsIn, i32Only}},
	// set_rows_f32 {src0 rows, src1 i64 indices, dst}: writes the rows
	// into dst in place (f32 or f16).
	"set_rows_f32": {op: ops.OpSetRows, inPlace: true, srcs: []string{"src0", "src1"},
		types: [][]ops.Type{f32Only, {ops.I64}}, dstT: []ops.Type{ops.F32, ops.F16}},
	"cont_f32":     copyKernel(ops.OpCont, ops.F32, ops.F32),
	"cont_f16":     copyKernel(ops.OpCont, ops.F16, ops.F16),
	"cpy_f32_f16":  copyKernel(ops.OpCpy, ops.F32, ops.F16),
	"sqr_f32":      {op: ops.OpSqr, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}},
	"sum_rows_f32": {op: ops.OpSumRows, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}},
	"mean_f32":     {op: ops.OpMean, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}},
	"cumsum_f32":   {op: ops.OpCumsum, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}},
	"diag_f32":     {op: ops.OpDiag, srcs: []string{"src0"}, types: [][]ops.Type{f32Only}},
	"clamp_f32": {op: ops.OpClamp, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"min": v.Float("min"), "max": v.Float("max")}
		}},
	"group_norm_f32": {op: ops.OpGroupNorm, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"n_groups": v.Int("n_groups"), "eps": v.Float("eps")}
		}},
	"concat_f32": {op: ops.OpConcat, srcs: []string{"src0", "src1"}, types: [][]ops.Type{f32Only, f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any { return map[string]any{"dim": v.Int("dim")} }},
	"repeat_f32": {op: ops.OpRepeat, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		params: func(_ abi.Values, dst abi.TensorDesc) map[string]any { return map[string]any{"ne": dst.Ne[:]} }},
	"pad_f32": {op: ops.OpPad, srcs: []string{"src0"}, types: [][]ops.Type{f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"lp": intArray(v, "lp", 4), "rp": intArray(v, "rp", 4)}
		}},
	"fill_f32": {op: ops.OpFill, inPlace: true,
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any { return map[string]any{"c": v.Float("c")} }},
	"set_f32": {op: ops.OpSet, inPlace: true, srcs: []string{"src1"}, types: [][]ops.Type{f32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"nb1": v.Int("nb1"), "nb2": v.Int("nb2"), "nb3": v.Int("nb3"), "offset": v.Int("offset")}
		}},
	"solve_tri_f32": {op: ops.OpSolveTri, srcs: []string{"a", "b"}, types: [][]ops.Type{f32Only, f32Only}, dst: "x"},

	"mul_mat_id_f32": {op: ops.OpMulMatID, srcs: []string{"src0", "src1", "src2"},
		types: [][]ops.Type{f32OrF16, f32Only, i32Only}},
	"mul_mat_id_Q8_0": {op: ops.OpMulMatID, srcs: []string{"src0", "src1", "src2"},
		types: [][]ops.Type{{ops.Q8_0}, f32Only, i32Only}},
	"mul_mat_id_Q4_0": {op: ops.OpMulMatID, srcs: []string{"src0", "src1", "src2"},
		types: [][]ops.Type{{ops.Q4_0}, f32Only, i32Only}},

	"ssm_conv_f32": {op: ops.OpSSMConv, srcs: []string{"src0", "src1"}, types: [][]ops.Type{f32Only, f32Only}},
	"ssm_scan_f32": {op: ops.OpSSMScan,
		srcs:  []string{"src0", "src1", "src2", "src3", "src4", "src5", "src6"},
		types: [][]ops.Type{f32Only, f32Only, f32Only, f32Only, f32Only, f32Only, i32Only},
		params: func(v abi.Values, _ abi.TensorDesc) map[string]any {
			return map[string]any{"K": v.Int("K")}
		}},

	// im2col reads s0, s1, p0, p1, d0, d1, is_2d from dst.op_params[0..6];
	// the result type is the dst's.
	"im2col": {op: ops.OpIm2col, srcs: []string{"src0", "src1"}, types: [][]ops.Type{f32OrF16, f32OrF16}, dstT: f32OrF16,
		params: func(_ abi.Values, dst abi.TensorDesc) map[string]any {
			p := convParams(dst)
			p["is_2d"] = dst.OpParams[6] != 0
			p["dst_type"] = dst.Type
			return p
		}},
	// conv_2d_f32_me reads the stride, padding and dilation from
	// dst.op_params[0..5] (ggml_conv_2d_direct's order).
	"conv_2d_f32_me": {op: ops.OpConv2D, srcs: []string{"src0", "src1"}, types: [][]ops.Type{f32Only, f32Only},
		params: func(_ abi.Values, dst abi.TensorDesc) map[string]any { return convParams(dst) }},
}

func convParams(dst abi.TensorDesc) map[string]any {
	p := map[string]any{}
	for i, name := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
		p[name] = int64(dst.OpParams[i])
	}
	return p
}

// intArray reads the array field name[0..n-1].
func intArray(v abi.Values, name string, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v.Int(fmt.Sprintf("%s[%d]", name, i))
	}
	return out
}

// run runs an opKernel.
func (k opKernel) run(r *run, v abi.Values) error {
	if _, ok := ops.Lookup(string(k.op)); !ok {
		return userError(fmt.Sprintf("op %s has no reference implementation yet", k.op))
	}
	var srcs []*ops.Tensor
	if len(k.srcs) > 0 {
		var err error
		if srcs, err = r.loadAll(v, k.srcs, k.types...); err != nil {
			return err
		}
	}
	field := k.dst
	if field == "" {
		field = "dst"
	}
	dstT := k.dstT
	if dstT == nil {
		dstT = f32Only
	}
	dst, err := r.store(v, field, dstT...)
	if err != nil {
		return err
	}
	if k.flat && len(srcs) > 0 && dst.Ne != srcs[0].Ne && dst.IsContiguous() && dst.NElements() == srcs[0].NElements() {
		if dst, err = ops.Reshape(dst, srcs[0].Ne[:]...); err != nil {
			return userError(err.Error())
		}
	}
	if k.inPlace {
		srcs = append([]*ops.Tensor{dst}, srcs...)
	}
	var raw map[string]any
	if k.params != nil {
		d, _ := v.Tensor(field)
		raw = k.params(v, d)
	}
	if e := k.enum; e != nil {
		code := v.Int(e.field)
		name, ok := e.name(r.m, int32(code))
		if !ok {
			return userError(fmt.Sprintf("%s %d is not a %s value of the ABI manifest", e.field, code, e.what))
		}
		raw = map[string]any{e.param: strings.ToLower(name)}
	}
	return r.compute(k.op, dst, srcs, raw)
}

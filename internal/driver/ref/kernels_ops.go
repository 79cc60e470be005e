package ref

import (
	"fmt"

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
	// inPlace passes the result tensor as the op's first source (set_f32:
	// dst is ggml's a, written in place; fill_f32: dst supplies the shape).
	inPlace bool
}

// opKernels are the kernels of ggml-et's later ops (reference
// ggml-et-backend.md §1.2) that map one to one onto the op catalog. A
// catalog without the op (an older ops package) makes the kernel report
// "no reference implementation yet".
var opKernels = map[string]opKernel{
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
	if k.inPlace {
		srcs = append([]*ops.Tensor{dst}, srcs...)
	}
	var raw map[string]any
	if k.params != nil {
		d, _ := v.Tensor(field)
		raw = k.params(v, d)
	}
	return r.compute(k.op, dst, srcs, raw)
}

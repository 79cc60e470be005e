package plan

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// opRule is how ggml-et handles one op: its supports_op check, its kernel
// choice and how the node fills the kernel's params struct. Adding an op
// is one row of rules (plus its layout in the ABI manifest).
type opRule struct {
	// check adds a reason per failed supports_op condition.
	check func(c *checker)
	// kernel chooses the kernel of a supported node.
	kernel func(x *nodeCtx) string
	// fields names the params-struct tensor field of each source, in the
	// node's source order ("" = the source is not passed). The result is
	// always the "dst" field. Absent optional sources are left out.
	fields []string
	// fieldsFor, when set, gives fields per node (ops whose optional
	// sources are told apart by a param).
	fieldsFor func(x *nodeCtx) []string
	// scalars sets the trailing scalars and the dst op_params.
	scalars func(x *nodeCtx, b *binder) error
	// noop, when set, says why a supported node launches nothing.
	noop func(x *nodeCtx) (string, bool)
	// dst is the result's tensor field ("" = "dst").
	dst string
	// pointers: the kernel takes raw device pointers, not tensor copies
	// (RWKV): fields and dst name pointer fields (Step.Pointers).
	pointers bool
}

// ruleFor returns the row of op.
func ruleFor(op ops.Op) (opRule, bool) {
	if r, ok := rules[op]; ok {
		return r, true
	}
	if r, ok := moreRules[op]; ok {
		return r, true
	}
	r, ok := restRules[op]
	return r, ok
}

// rules is the per-op table (reference/ggml-et-backend.md §1.2, §1.3). An
// op of the catalog without a row is one ggml-et does not implement.
var rules = map[ops.Op]opRule{
	ops.OpMulMat: {check: checkMulMat, kernel: kernelMulMat, fields: []string{"src0", "src1"}},
	ops.OpAdd:    {check: checkBinary, kernel: fixed("el_map_f32"), fields: []string{"src0", "src1"}},
	ops.OpSub:    {check: checkBinary, kernel: fixed("el_map_f32"), fields: []string{"src0", "src1"}},
	ops.OpMul:    {check: checkBinary, kernel: fixed("el_map_f32"), fields: []string{"src0", "src1"}},
	ops.OpRMSNorm: {check: checkNorm, kernel: fixed("rms_norm_f32"), fields: []string{"src0"},
		scalars: scalarsEps},
	ops.OpNorm: {check: checkNorm, kernel: fixed("norm_f32"), fields: []string{"src0"},
		scalars: scalarsEps},
	ops.OpL2Norm: {check: checkNorm, kernel: fixed("l2_norm_f32"), fields: []string{"src0"},
		scalars: scalarsEps},
	ops.OpScale: {check: checkScale, kernel: fixed("scale_f32"), fields: []string{"src0"},
		scalars: scalarsScale},
	ops.OpSoftMax: {check: checkSoftMax, kernel: fixed("softmax_f32"),
		fieldsFor: maskSinksFields(1, []string{"src0"}, "src1", "src2"), scalars: scalarsSoftMax},
	ops.OpRope: {check: checkRope, kernel: fixed("rope_f32"), fields: []string{"src0", "src1", "src2"},
		scalars: scalarsRope},
	ops.OpGLU: {check: checkGLU, kernel: fixed("glu_f32"), fields: []string{"src0", "src1"},
		scalars: scalarsGLU},
	ops.OpUnary: {check: checkUnary, kernel: fixed("unary_f32"), fields: []string{"src0"},
		scalars: scalarsUnary},
	ops.OpGetRows: {check: checkGetRows, kernel: fixed("get_rows_f32"), fields: []string{"src0", "src1"}},
	ops.OpSetRows: {check: checkSetRows, kernel: fixed("set_rows_f32"), fields: []string{"", "src0", "src1"}},
	ops.OpCpy:     {check: checkCpy, kernel: kernelCpy, fields: []string{"src0"}, noop: noopEmpty},
	ops.OpCont:    {check: checkCont, kernel: kernelCont, fields: []string{"src0"}},
	ops.OpFlashAttnExt: {check: checkFlashAttn, kernel: kernelFlashAttn,
		fieldsFor: maskSinksFields(3, []string{"q", "k", "v"}, "mask", ""), scalars: scalarsFlashAttn},
}

func fixed(kernel string) func(*nodeCtx) string {
	return func(*nodeCtx) string { return kernel }
}

// MulMatKernel is ggml_et_op_mul_mat's choice among its seven kernels
// (reference §1.3), first match wins. a is src0 (weights [K, M]), b is
// src1 ([K, N]), dst is [M, N]. It returns "" for type pairs no kernel
// takes.
func MulMatKernel(a, b, dst *ops.Tensor) string {
	switch {
	case a.Type == ops.Q4_0 && b.Type == ops.F32 && b.Ne[1] >= 53 && a.Ne[1]%16 == 0 && a.Ne[0]%32 == 0:
		return "mul_mat_Q4_0_matrix_engine"
	case a.Type == ops.Q4_0 && b.Type == ops.F32:
		return "mul_mat_Q4_0"
	case a.Type == ops.Q8_0 && b.Type == ops.F32:
		return "mul_mat_Q8_0"
	case a.Type == ops.F16 && b.Type == ops.F16 && mulMatAligned(a, b, dst):
		return "mul_mat_f16_matrix_engine"
	case a.Type == ops.F16 && (b.Type == ops.F16 || b.Type == ops.F32):
		return "mul_mat_f16"
	case a.Type == ops.F32 && b.Type == ops.F32 && mulMatAligned(a, b, dst):
		return "mul_mat_f32_matrix_engine"
	case a.Type == ops.F32 && (b.Type == ops.F16 || b.Type == ops.F32):
		return "mul_mat_f32"
	}
	return ""
}

func kernelMulMat(x *nodeCtx) string { return MulMatKernel(x.src(0), x.src(1), x.dst()) }

func kernelCpy(x *nodeCtx) string {
	return cpyKernels[[2]ops.Type{x.src(0).Type, x.dst().Type}]
}

func kernelCont(x *nodeCtx) string {
	if x.src(0).Type == ops.F16 {
		return "cont_f16"
	}
	return "cont_f32"
}

// kernelFlashAttn: the f16 matrix-engine kernel for f16 K/V with dk % 32
// == 0, otherwise flash_attn_ext_f32, which supports_op never lets through.
func kernelFlashAttn(x *nodeCtx) string {
	if x.src(1).Type == ops.F16 && x.src(2).Type == ops.F16 && x.src(0).Ne[0]%32 == 0 {
		return "flash_attn_ext_f16_me"
	}
	return "flash_attn_ext_f32"
}

func noopEmpty(x *nodeCtx) (string, bool) {
	if x.src(0).NElements() == 0 {
		return "0 elements: ggml-et launches nothing (kernel \"noop\")", true
	}
	return "", false
}

// binder collects the scalar fields and the dst op_params of a launch.
type binder struct {
	v  abi.Values
	op [abi.NumOpParams]int32
}

func (b *binder) opF32(i int, f float32) { b.op[i] = int32(math.Float32bits(f)) }

// --- scalars and op_params per op. op_params are what ggml stores in the
// result tensor (the whole tensor is copied into the params struct). ---

func scalarsEps(x *nodeCtx, b *binder) error {
	eps := x.p().F32("eps")
	b.v.SetFloat("eps", eps)
	b.opF32(0, eps)
	return nil
}

func scalarsScale(x *nodeCtx, b *binder) error {
	s, bias := x.p().F32("scale"), x.p().F32("bias")
	b.v.SetFloat("scale", s)
	b.v.SetFloat("bias", bias)
	b.opF32(0, s)
	b.opF32(1, bias)
	return nil
}

func scalarsSoftMax(x *nodeCtx, b *binder) error {
	s, mb := x.p().F32("scale"), x.p().F32("max_bias")
	b.v.SetFloat("scale", s)
	b.v.SetFloat("max_bias", mb)
	b.opF32(0, s)
	b.opF32(1, mb)
	return nil
}

// ropeOpParams is ggml's op_params of a ROPE node: n_past (0), n_dims,
// mode, n_ctx (0), n_ctx_orig, the six floats, sections[4] (only for a
// mode with the MROPE bit, as ggml_rope_multi stores them) and [15], the
// ggml_rope_set_offset slot (the n_offs param).
func ropeOpParams(x *nodeCtx) ([abi.NumOpParams]int32, error) {
	var op [abi.NumOpParams]int32
	p := x.p()
	name := p.Str("mode")
	mode, ok := x.m.RopeMode(name)
	if !ok {
		return op, fmt.Errorf("rope mode %s has no value in the ABI manifest", name)
	}
	mrope, ok := x.m.RopeMode("mrope")
	if !ok {
		return op, fmt.Errorf("rope mode mrope has no value in the ABI manifest")
	}
	op[1] = int32(p.Int("n_dims"))
	op[2] = mode
	op[4] = int32(p.Int("n_ctx_orig"))
	for i, f := range []string{"freq_base", "freq_scale", "ext_factor", "attn_factor", "beta_fast", "beta_slow"} {
		op[5+i] = int32(math.Float32bits(p.F32(f)))
	}
	if mode&mrope != 0 {
		for i, s := range p.Ints("sections") {
			if i < 4 {
				op[11+i] = int32(s)
			}
		}
	}
	op[15] = int32(p.Int("n_offs"))
	return op, nil
}

// scalarsRope copies rope_settings from op_params[0..14], as
// ggml_et_op_rope does: sections only when mode & MROPE, else zero.
func scalarsRope(x *nodeCtx, b *binder) error {
	op, err := ropeOpParams(x)
	if err != nil {
		return err
	}
	b.op = op
	for i, f := range []string{"n_past", "n_dims", "mode", "n_ctx", "n_ctx_orig"} {
		b.v.SetInt(f, int64(op[i]))
	}
	for i, f := range []string{"freq_base", "freq_scale", "ext_factor", "attn_factor", "beta_fast", "beta_slow"} {
		b.v.SetFloat(f, math.Float32frombits(uint32(op[5+i])))
	}
	for i := range 4 {
		b.v.SetInt(fmt.Sprintf("sections[%d]", i), int64(op[11+i]))
	}
	return nil
}

// scalarsGLU: glu_op_type from the manifest, swapped, and alpha and limit
// only for swiglu_oai (0 otherwise), as ggml_et_op_glu fills them.
func scalarsGLU(x *nodeCtx, b *binder) error {
	name := x.p().Str("op")
	v, ok := x.m.GLUValue(name)
	if !ok {
		return fmt.Errorf("glu op %s has no value in the ABI manifest", name)
	}
	swapped := int64(0)
	if x.p().Bool("swapped") {
		swapped = 1
	}
	b.v.SetInt("glu_op_type", int64(v))
	b.v.SetInt("swapped", swapped)
	b.op[0], b.op[1] = v, int32(swapped)
	var alpha, limit float32
	if name == "swiglu_oai" {
		alpha, limit = x.p().F32("alpha"), x.p().F32("limit")
	}
	b.v.SetFloat("alpha", alpha)
	b.v.SetFloat("limit", limit)
	b.opF32(2, alpha)
	b.opF32(3, limit)
	return nil
}

func scalarsUnary(x *nodeCtx, b *binder) error {
	name := x.p().Str("op")
	v, ok := x.m.UnaryValue(name)
	if !ok {
		return fmt.Errorf("unary op %s has no value in the ABI manifest", name)
	}
	b.v.SetInt("unary_op", int64(v))
	b.op[0] = v
	return nil
}

// scalarsFlashAttn: scale and has_mask; op_params are ggml's scale,
// max_bias, logit_softcap and prec (GGML_PREC_DEFAULT = 0).
func scalarsFlashAttn(x *nodeCtx, b *binder) error {
	s := x.p().F32("scale")
	hasMask := int64(0)
	if mi, _ := ops.MaskSinks(3, len(x.n.Src), x.p()); mi >= 0 {
		hasMask = 1
	}
	b.v.SetFloat("scale", s)
	b.v.SetInt("has_mask", hasMask)
	b.opF32(0, s)
	b.opF32(1, x.p().F32("max_bias"))
	b.opF32(2, x.p().F32("logit_softcap"))
	return nil
}

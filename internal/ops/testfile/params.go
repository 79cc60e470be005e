package testfile

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

// decoder turns a line's raw op_params words into et's named params: the
// inverse of the planner's op_params encoding (ggml.c's order for each
// op). Every word it reads is marked used; a non-zero word no decoder
// reads is an error (et cannot express it).
type decoder struct {
	op       *Op
	m        *abi.Manifest
	info     *ops.OpInfo
	outType  ops.Type
	srcTypes []ops.Type
	used     [maxParams]bool
	err      error
}

func (d *decoder) word(i int) int32 {
	d.used[i] = true
	return d.op.OpParams[i]
}

func (d *decoder) f(i int) float64 { return f32(d.word(i)) }
func (d *decoder) i(i int) int64   { return int64(d.word(i)) }
func (d *decoder) b(i int) bool    { return d.word(i) != 0 }

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// params returns the node's raw params for graph.Build.
func (d *decoder) params() map[string]any {
	p := map[string]any{}
	switch d.info.Name {
	case ops.OpRMSNorm, ops.OpNorm, ops.OpL2Norm:
		p["eps"] = d.f(0)
	case ops.OpScale:
		p["scale"], p["bias"] = d.f(0), d.f(1)
	case ops.OpSoftMax:
		p["scale"], p["max_bias"] = d.f(0), d.f(1)
	case ops.OpRope:
		d.rope(p)
	case ops.OpUnary:
		v := d.word(0)
		name, ok := d.m.UnaryName(v)
		if !ok {
			d.failf("op_params[0] = %d is not a unary op of the ABI manifest", v)
			break
		}
		p["op"] = strings.ToLower(name)
	case ops.OpGLU:
		v := d.word(0)
		name, ok := d.m.GLUName(v)
		if !ok {
			d.failf("op_params[0] = %d is not a GLU op of the ABI manifest", v)
			break
		}
		p["op"] = strings.ToLower(name)
		if d.b(1) {
			p["swapped"] = true // only the single-tensor form has it
		}
		if strings.EqualFold(name, "swiglu_oai") {
			p["alpha"], p["limit"] = d.f(2), d.f(3)
		}
	case ops.OpCpy:
		p["type"] = d.outType.String()
	case ops.OpFlashAttnExt:
		p["scale"], p["max_bias"], p["logit_softcap"] = d.f(0), d.f(1), d.f(2)
		d.word(3) // precision: et's reference accumulates in f32 either way
	case ops.OpMulMat, ops.OpMulMatID:
		d.word(0) // precision hint (ggml_mul_mat_set_prec)
	case ops.OpClamp:
		p["min"], p["max"] = d.f(0), d.f(1)
	case ops.OpGroupNorm:
		p["n_groups"], p["eps"] = d.i(0), d.f(1)
	case ops.OpIm2col:
		for k, n := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
			p[n] = d.i(k)
		}
		p["is_2d"] = d.b(6)
		p["dst_type"] = d.outType.String()
	case ops.OpConv2D:
		for k, n := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
			p[n] = d.i(k)
		}
	case ops.OpConcat:
		p["dim"] = d.i(0)
	case ops.OpRepeat:
		p["ne"] = d.op.Ne[:]
	case ops.OpPad:
		lp, rp := make([]int64, 4), make([]int64, 4)
		for k := range 4 {
			lp[k], rp[k] = d.i(2*k), d.i(2*k+1)
		}
		p["lp"], p["rp"] = lp, rp
	case ops.OpFill:
		p["c"] = d.f(0)
	case ops.OpTri:
		v := d.word(0)
		name, ok := d.m.TriName(v)
		if !ok {
			d.failf("op_params[0] = %d is not a tri type of the ABI manifest", v)
			break
		}
		p["type"] = strings.ToLower(name)
	case ops.OpSet:
		for k, n := range []string{"nb1", "nb2", "nb3", "offset"} {
			p[n] = d.i(k)
		}
		p["inplace"] = d.b(4)
	case ops.OpSSMScan, ops.OpGatedDeltaNet:
		p["K"] = d.i(0)
	}
	for _, s := range d.info.Params {
		if _, ok := p[s.Name]; ok {
			continue
		}
		if s.Required {
			d.failf("et's %s needs parameter %s, which this reader does not decode", d.info.Name, s.Name)
		}
	}
	return p
}

// rope: n_past (0), n_dims, mode, n_ctx (0), n_ctx_orig, six floats,
// sections[4] (MROPE modes) and n_offs in [15] (ggml_rope_set_offset).
func (d *decoder) rope(p map[string]any) {
	p["n_dims"] = d.i(1)
	mode := d.word(2)
	name := ""
	for _, n := range []string{"normal", "neox", "mrope", "vision", "imrope"} {
		if v, ok := d.m.RopeMode(n); ok && v == mode {
			name = n
		}
	}
	if name == "" {
		d.failf("rope mode %d is not a mode of the ABI manifest", mode)
		return
	}
	p["mode"] = name
	p["n_ctx_orig"] = d.i(4)
	for k, n := range []string{"freq_base", "freq_scale", "ext_factor", "attn_factor", "beta_fast", "beta_slow"} {
		p[n] = d.f(5 + k)
	}
	if mrope, ok := d.m.RopeMode("mrope"); ok && mode&mrope != 0 {
		p["sections"] = []int64{d.i(11), d.i(12), d.i(13), d.i(14)}
	}
}

// checkDropped checks the ggml sources et's node does not take: CPY's
// destination must have the result's type and element count.
func (d *decoder) checkDropped(order []int) error {
	if d.info.Name == ops.OpCpy && len(d.op.Srcs) == 2 {
		dst := d.op.Srcs[1]
		if d.srcTypes[1] != d.outType {
			return fmt.Errorf("the destination (source 1) is %s, the result %s", d.srcTypes[1], d.outType)
		}
		if nelem(dst.Ne) != nelem(d.op.Ne) {
			return fmt.Errorf("the destination (source 1) has %d elements, the result %d", nelem(dst.Ne), nelem(d.op.Ne))
		}
	}
	return nil
}

func nelem(ne [4]int64) int64 { return ne[0] * ne[1] * ne[2] * ne[3] }

// init is how test_generic_op fills et source k (ggml source gi) of type
// t: integer sources by op (row ids for GET_ROWS, distinct rows per index
// row for SET_ROWS, positions for ROPE, expert ids for MUL_MAT_ID, a
// permutation for SSM_SCAN's ids), FLASH_ATTN_EXT's mask with -inf/0
// blocks, everything else uniform(-1, 1). Integer sources of other ops are
// zeros (test_generic_op writes float bits into them, never a valid index).
func (d *decoder) init(op ops.Op, k, gi int, t ops.Type) graph.Init {
	o := d.op
	randint := func(n int64) graph.Init {
		return graph.Init{Func: "randint", Args: []float64{0, float64(max(n, 1))}}
	}
	perm := func(n, ne0 int64) graph.Init {
		if n >= 1 && ne0 <= n && n <= 1<<24 {
			return graph.Init{Func: "perm", Args: []float64{float64(n)}}
		}
		return randint(n)
	}
	if t == ops.I32 || t == ops.I64 {
		ne0 := o.Srcs[gi].Ne[0]
		switch op {
		case ops.OpGetRows:
			return randint(o.Srcs[0].Ne[1])
		case ops.OpSetRows:
			return perm(o.Ne[1], ne0)
		case ops.OpRope:
			return randint(o.Ne[2])
		case ops.OpMulMatID:
			return perm(o.Srcs[0].Ne[2], ne0)
		case ops.OpSSMScan:
			return perm(ne0, ne0)
		}
		return graph.Init{Func: "zeros"}
	}
	if op == ops.OpFlashAttnExt && gi == 3 && t.BlockSize() == 1 {
		return graph.Init{Func: "kq_mask"}
	}
	return graph.Init{Func: "uniform", Args: []float64{-1, 1}}
}

package refmath

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// UnaryFunc returns the float32 function of a unary sub-op (nil if the
// name is unknown).
func UnaryFunc(name string) func(float32) float32 {
	switch name {
	case "abs":
		return func(x float32) float32 { return float32(math.Abs(float64(x))) }
	case "sgn":
		return func(x float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case "neg":
		return func(x float32) float32 { return -x }
	case "step":
		return func(x float32) float32 {
			if x > 0 {
				return 1
			}
			return 0
		}
	case "tanh":
		return cpu.Tanhf32
	case "elu":
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return cpu.Expm1f32(x)
		}
	case "relu":
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return 0
		}
	case "sigmoid":
		return func(x float32) float32 { return 1 / (1 + cpu.Expf32(-x)) }
	case "gelu":
		return GeluCPU
	case "gelu_quick":
		return GeluQuickCPU
	case "silu":
		return cpu.SiluF32
	case "hardswish":
		return func(x float32) float32 { return x * hardsigmoidF32(x) }
	case "hardsigmoid":
		return hardsigmoidF32
	case "exp":
		return cpu.Expf32
	case "expm1":
		return cpu.Expm1f32
	case "softplus":
		return func(x float32) float32 {
			if x > 20 {
				return x
			}
			return float32(math.Log(float64(1 + cpu.Expf32(x))))
		}
	case "gelu_erf":
		return geluErfF32
	case "floor":
		return func(x float32) float32 { return float32(math.Floor(float64(x))) }
	case "ceil":
		return func(x float32) float32 { return float32(math.Ceil(float64(x))) }
	case "round":
		return func(x float32) float32 { return float32(math.Round(float64(x))) }
	case "trunc":
		return func(x float32) float32 { return float32(math.Trunc(float64(x))) }
	}
	return nil
}

func (ks *Kernels) refUnary(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	f := UnaryFunc(p.Str("op"))
	if f == nil {
		return &ops.ParamError{Op: ops.OpUnary, Param: "op", Msg: fmt.Sprintf("unknown unary op %q", p.Str("op"))}
	}
	// ggml's split of an f32 row for silu (silu.go); f16 rows are silu of
	// each value. (A flag, not a method value: that would be allocated.)
	silu := p.Str("op") == "silu" && srcs[0].Type == ops.F32
	kern := func(y, x []float32) {
		if silu {
			ks.SiluRow(y, x)
			return
		}
		for i, v := range x {
			y[i] = f(v)
		}
	}
	if x := srcs[0]; cpu.DenseF32Rows(dst, x) && dst.Ne == x.Ne {
		// exp, tanh, erf: a few ns an element, 4 work units.
		cpu.ForRowChunks(x.NRows(), x.Ne[0], 4, func(r, lo, hi int64) {
			i1, i2, i3 := ops.RowIndex(x.Ne, r)
			kern(cpu.F32RowView(dst, i1, i2, i3)[lo:hi], cpu.F32RowView(x, i1, i2, i3)[lo:hi])
		})
		return nil
	}
	normRows(dst, srcs[0], func(y []float32) { kern(y, y) })
	return nil
}

// ggml's constants, as float32.
const (
	geluCoefA      float32 = 0.044715
	geluQuickCoef  float32 = -1.702
	sqrt2OverPi    float32 = 0.79788456080286535587989211986876
	sqrt2Inv       float32 = 0.70710678118654752440084436210484
	geluTableLimit float32 = 10
)

// GeluF32 is ggml_gelu_f32, the tanh approximation in float32:
// 0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²))).
func GeluF32(x float32) float32 {
	inner := float32(sqrt2OverPi*x) * (1 + float32(float32(geluCoefA*x)*x))
	return float32(0.5*x) * (1 + cpu.Tanhf32(inner))
}

// GeluCPU is what ggml's CPU computes for gelu on f32 data: 0 for
// x <= -10, x for x >= 10, otherwise the f16 table entry
// f16(GeluF32(f16(x))).
func GeluCPU(x float32) float32 {
	if x <= -geluTableLimit {
		return 0
	}
	if x >= geluTableLimit {
		return x
	}
	return ops.RoundF16(GeluF32(ops.RoundF16(x)))
}

// GeluQuickF32 is ggml_gelu_quick_f32: x·sigmoid(1.702·x).
func GeluQuickF32(x float32) float32 {
	return x * (1 / (1 + cpu.Expf32(geluQuickCoef*x)))
}

// GeluQuickCPU is what ggml's CPU computes for gelu_quick on f32 data: the
// f16 table entry f16(GeluQuickF32(f16(x))), with no range cut-off.
func GeluQuickCPU(x float32) float32 { return ops.RoundF16(GeluQuickF32(ops.RoundF16(x))) }

func geluErfF32(x float32) float32 {
	e := float32(math.Erf(float64(x * sqrt2Inv)))
	return float32(0.5*x) * (1 + e)
}

func hardsigmoidF32(x float32) float32 { return min(1, max(0, (x+3)/6)) }

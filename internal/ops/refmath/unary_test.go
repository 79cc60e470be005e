package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestUnaryValues(t *testing.T) {
	in := []float32{-2.5, -0.5, 0, 0.5, 2.5, 25}
	e := func(f func(float64) float64) []float32 {
		out := make([]float32, len(in))
		for i, v := range in {
			out[i] = float32(f(float64(v)))
		}
		return out
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	hsig := func(x float64) float64 { return math.Min(1, math.Max(0, (x+3)/6)) }
	tests := []struct {
		op   string
		want []float32
		tol  float64
	}{
		{"abs", []float32{2.5, 0.5, 0, 0.5, 2.5, 25}, 0},
		{"sgn", []float32{-1, -1, 0, 1, 1, 1}, 0},
		{"neg", []float32{2.5, 0.5, 0, -0.5, -2.5, -25}, 0},
		{"step", []float32{0, 0, 0, 1, 1, 1}, 0},
		{"tanh", e(math.Tanh), 1e-7},
		{"elu", e(func(x float64) float64 {
			if x > 0 {
				return x
			}
			return math.Expm1(x)
		}), 1e-7},
		{"relu", []float32{0, 0, 0, 0.5, 2.5, 25}, 0},
		{"sigmoid", e(sig), 1e-7},
		{"silu", e(func(x float64) float64 { return x * sig(x) }), 1e-6},
		{"hardswish", e(func(x float64) float64 { return x * hsig(x) }), 1e-7},
		{"hardsigmoid", e(hsig), 1e-7},
		{"exp", e(math.Exp), 1e-6},
		{"expm1", e(math.Expm1), 1e-6},
		{"softplus", []float32{float32(math.Log1p(math.Exp(-2.5))), float32(math.Log1p(math.Exp(-0.5))), float32(math.Ln2), float32(math.Log1p(math.Exp(0.5))), float32(math.Log1p(math.Exp(2.5))), 25}, 1e-6},
		{"gelu_erf", e(func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }), 1e-6},
		{"floor", []float32{-3, -1, 0, 0, 2, 25}, 0},
		{"ceil", []float32{-2, -0, 0, 1, 3, 25}, 0},
		{"round", []float32{-3, -1, 0, 1, 3, 25}, 0}, // halves away from zero
		{"trunc", []float32{-2, -0, 0, 0, 2, 25}, 0},
		// The f16-table functions, within f16 precision of the exact ones.
		{"gelu", e(func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x)))
		}), 1e-3},
		{"gelu_quick", e(func(x float64) float64 { return x * sig(1.702*x) }), 1e-3},
	}
	x := ops.FromF32(ops.F32, []int64{6}, in)
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			seen[tt.op] = true
			opstest.CheckClose(t, mustOp(t, ops.OpUnary, []*ops.Tensor{x}, map[string]any{"op": tt.op}).ToF32(), tt.want, tt.tol)
		})
	}
	for _, op := range ops.UnaryOps {
		if !seen[op] {
			t.Errorf("no test for unary %s", op)
		}
	}
	if len(ops.UnaryOps) != 21 {
		t.Errorf("%d unary ops, ggml-et accepts 21", len(ops.UnaryOps))
	}
}

func TestGeluTable(t *testing.T) {
	// The CPU's gelu: exact outside (-10, 10), else f16 table values.
	tests := []struct {
		x    float32
		want float32
	}{
		{-10, 0},
		{-12, 0},
		{10, 10},
		{11.5, 11.5},
		{0, 0},
		// 0.1 rounds to f16 0.0999755859; gelu of that rounded to f16.
		{0.1, ops.RoundF16(GeluF32(0.0999755859375))},
		{1, ops.RoundF16(GeluF32(1))},
	}
	for _, tt := range tests {
		if got := GeluCPU(tt.x); got != tt.want {
			t.Errorf("GeluCPU(%g) = %g, want %g", tt.x, got, tt.want)
		}
	}
	// Every GeluCPU value in (-10, 10) is an f16 value.
	for _, x := range opstest.RandVals(5, 1000, -10, 10) {
		if g := GeluCPU(x); ops.RoundF16(g) != g {
			t.Fatalf("GeluCPU(%g) = %g is not an f16 value", x, g)
		}
		if d := math.Abs(float64(GeluCPU(x) - GeluF32(x))); d > 2e-2 {
			t.Fatalf("GeluCPU(%g) far from GeluF32: %g", x, d)
		}
	}
	if g := GeluQuickCPU(20); g != ops.RoundF16(20*(1/(1+cpu.Expf32(-1.702*20)))) {
		t.Errorf("GeluQuickCPU(20) = %g", g)
	}
}

func TestUnaryF16AndStrided(t *testing.T) {
	xs := []float32{-1, 0.5, 2, -3, 4, 0.25}
	x := ops.FromF32(ops.F32, []int64{3, 2}, xs)
	y := mustOp(t, ops.OpUnary, []*ops.Tensor{reftest.PermutedCopy(t, x)}, map[string]any{"op": "neg"})
	opstest.CheckClose(t, y.ToF32(), []float32{1, -0.5, -2, 3, -4, -0.25}, 0)
	h := mustOp(t, ops.OpUnary, []*ops.Tensor{ops.FromF32(ops.F16, []int64{3, 2}, xs)}, map[string]any{"op": "silu"})
	if h.Type != ops.F16 {
		t.Fatalf("type %s", h.Type)
	}
	want := make([]float32, len(xs))
	for i, v := range xs {
		want[i] = ops.RoundF16(cpu.SiluF32(v))
	}
	opstest.CheckClose(t, h.ToF32(), want, 0)
	wantOpError(t, ops.OpUnary, []*ops.Tensor{ops.New(ops.I32, 4)}, map[string]any{"op": "abs"}, "unary: x is i32, want f32 or f16")
}

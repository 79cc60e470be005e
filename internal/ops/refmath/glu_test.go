package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestGLU(t *testing.T) {
	a := []float32{-2, -0.5, 0.5, 3}
	g := []float32{1, 2, -1, 0.5}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	pair := func(f func(a, b float64) float64) []float32 {
		out := make([]float32, len(a))
		for i := range a {
			out[i] = float32(f(float64(a[i]), float64(g[i])))
		}
		return out
	}
	tests := []struct {
		op   string
		want []float32
		tol  float64
	}{
		{"reglu", []float32{0, 0, -0.5, 1.5}, 0},
		{"swiglu", pair(func(a, b float64) float64 { return a * sig(a) * b }), 1e-6},
		{"geglu", pair(func(a, b float64) float64 {
			return 0.5 * a * (1 + math.Tanh(math.Sqrt(2/math.Pi)*a*(1+0.044715*a*a))) * b
		}), 2e-3},
		{"geglu_erf", pair(func(a, b float64) float64 { return 0.5 * a * (1 + math.Erf(a/math.Sqrt2)) * b }), 1e-6},
		{"geglu_quick", pair(func(a, b float64) float64 { return a * sig(1.702*a) * b }), 2e-3},
	}
	// Single tensor: each row is [a | g]; swapped: [g | a].
	single := ops.FromF32(ops.F32, []int64{8, 2}, append(append(append([]float32{}, a...), g...), append(append([]float32{}, a...), g...)...))
	swapped := ops.FromF32(ops.F32, []int64{8, 1}, append(append([]float32{}, g...), a...))
	split := [2]*ops.Tensor{ops.FromF32(ops.F32, []int64{4, 1}, a), ops.FromF32(ops.F32, []int64{4, 1}, g)}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			y := mustOp(t, ops.OpGLU, []*ops.Tensor{single}, map[string]any{"op": tt.op})
			if y.Ne != [4]int64{4, 2, 1, 1} {
				t.Fatalf("single: shape %s", y.ShapeString())
			}
			opstest.CheckClose(t, y.ToF32(), append(append([]float32{}, tt.want...), tt.want...), tt.tol)
			ys := mustOp(t, ops.OpGLU, []*ops.Tensor{swapped}, map[string]any{"op": tt.op, "swapped": true})
			opstest.CheckClose(t, ys.ToF32(), tt.want, tt.tol)
			yp := mustOp(t, ops.OpGLU, []*ops.Tensor{split[0], split[1]}, map[string]any{"op": tt.op})
			opstest.CheckClose(t, yp.ToF32(), tt.want, tt.tol)
		})
	}
	t.Run("swiglu_oai", func(t *testing.T) {
		// alpha 1.702, limit 2: a = min(a, 2), b = clamp(b, -2, 2).
		aa := ops.FromF32(ops.F32, []int64{3}, []float32{-1, 1, 5})
		bb := ops.FromF32(ops.F32, []int64{3}, []float32{3, -3, 0.5})
		f := func(a, b float64) float32 { return float32(a * sig(1.702*a) * (b + 1)) }
		y := mustOp(t, ops.OpGLU, []*ops.Tensor{aa, bb}, map[string]any{"op": "swiglu_oai", "alpha": 1.702, "limit": 2})
		opstest.CheckClose(t, y.ToF32(), []float32{f(-1, 2), f(1, -2), f(2, 0.5)}, 1e-6)
	})
	t.Run("split strided", func(t *testing.T) {
		x := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, -1, 2, 3})
		gg := ops.FromF32(ops.F32, []int64{2, 2}, []float32{5, 5, 6, 7})
		y := mustOp(t, ops.OpGLU, []*ops.Tensor{reftest.PermutedCopy(t, x), reftest.PermutedCopy(t, gg)}, map[string]any{"op": "reglu"})
		opstest.CheckClose(t, y.ToF32(), []float32{5, 0, 12, 21}, 0)
	})
}

func TestGLUErrors(t *testing.T) {
	// An odd ne0: the halves are elements 0..1 and 2..3; element 4 is not read.
	odd := ops.FromF32(ops.F32, []int64{5}, []float32{1, -2, 3, 4, 1000})
	opstest.CheckClose(t, mustOp(t, ops.OpGLU, []*ops.Tensor{odd}, map[string]any{"op": "reglu"}).ToF32(), []float32{3, 0}, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpGLU, []*ops.Tensor{odd}, map[string]any{"op": "reglu", "swapped": true}).ToF32(), []float32{3, -8}, 0)
	wantOpError(t, ops.OpGLU, []*ops.Tensor{ops.New(ops.F32, 4), ops.New(ops.F32, 3)}, map[string]any{"op": "swiglu"}, "same shape")
	wantOpError(t, ops.OpGLU, []*ops.Tensor{ops.New(ops.F32, 4)}, map[string]any{"op": "swiglu_oai"}, "swiglu_oai exists only in split form")
	wantOpError(t, ops.OpGLU, []*ops.Tensor{ops.New(ops.F32, 4), ops.New(ops.F32, 4)}, map[string]any{"op": "reglu", "swapped": true}, "param swapped: applies only to the single-tensor form")
	wantOpError(t, ops.OpGLU, []*ops.Tensor{ops.New(ops.F32, 4), ops.New(ops.F16, 4)}, map[string]any{"op": "reglu"}, "b is f16, want f32")
	wantOpError(t, ops.OpGLU, []*ops.Tensor{ops.New(ops.F32, 4)}, nil, "param op: required")
}

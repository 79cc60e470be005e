package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestClamp(t *testing.T) {
	nan := float32(math.NaN())
	x := ops.FromF32(ops.F32, []int64{3, 2}, []float32{-2, -0.5, 0, 0.25, 0.5, 3})
	want := []float32{-0.5, -0.5, 0, 0.25, 0.5, 0.5}
	raw := map[string]any{"min": -0.5, "max": 0.5}
	opstest.CheckClose(t, mustOp(t, ops.OpClamp, []*ops.Tensor{x}, raw).ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpClamp, []*ops.Tensor{reftest.PermutedCopy(t, x)}, raw).ToF32(), want, 0)

	// NaN goes to max, as C's MAX(MIN(x, max), min) does.
	y := mustOp(t, ops.OpClamp, []*ops.Tensor{ops.FromF32(ops.F32, []int64{1}, []float32{nan})}, raw)
	if y.ToF32()[0] != 0.5 {
		t.Errorf("clamp(NaN) = %v, want 0.5", y.ToF32()[0])
	}
	h := mustOp(t, ops.OpClamp, []*ops.Tensor{ops.FromF32(ops.F16, []int64{2}, []float32{-3, 0.1})}, map[string]any{"min": -1, "max": 1})
	if h.Type != ops.F16 {
		t.Fatalf("type %s, want f16", h.Type)
	}
	opstest.CheckClose(t, h.ToF32(), []float32{-1, ops.RoundF16(0.1)}, 0)

	wantOpError(t, ops.OpClamp, []*ops.Tensor{x}, map[string]any{"min": -1}, "clamp: param max: required")
	wantOpError(t, ops.OpClamp, []*ops.Tensor{ops.New(ops.I32, 2)}, raw, "clamp: x is i32, want f32 or f16")
}

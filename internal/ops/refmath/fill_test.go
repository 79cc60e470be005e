package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestFill(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{3, 2}, opstest.RandVals(1, 6, -1, 1))
	opstest.CheckClose(t, mustOp(t, ops.OpFill, []*ops.Tensor{x}, map[string]any{"c": 2.5}).ToF32(), []float32{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpFill, []*ops.Tensor{x}, nil).ToF32(), make([]float32, 6), 0)
	h := mustOp(t, ops.OpFill, []*ops.Tensor{ops.New(ops.F16, 2)}, map[string]any{"c": 0.1})
	if h.Type != ops.F16 {
		t.Fatalf("type %s, want f16", h.Type)
	}
	opstest.CheckClose(t, h.ToF32(), []float32{ops.RoundF16(0.1), ops.RoundF16(0.1)}, 0)
	wantOpError(t, ops.OpFill, []*ops.Tensor{ops.New(ops.I32, 2)}, nil, "fill: x is i32, want f32 or f16")
}

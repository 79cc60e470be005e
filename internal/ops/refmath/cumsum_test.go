package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestCumsum(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{4, 2}, []float32{1, 2, 3, 4, 0.5, -0.5, 2, -8})
	want := []float32{1, 3, 6, 10, 0.5, 0, 2, -6}
	opstest.CheckClose(t, mustOp(t, ops.OpCumsum, []*ops.Tensor{x}, nil).ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpCumsum, []*ops.Tensor{reftest.PermutedCopy(t, x)}, nil).ToF32(), want, 0)

	// float32 accumulation: 2^24 + 1 + 1 stays 2^24 (each +1 rounds away).
	y := mustOp(t, ops.OpCumsum, []*ops.Tensor{ops.FromF32(ops.F32, []int64{3}, []float32{1 << 24, 1, 1})}, nil)
	opstest.CheckClose(t, y.ToF32(), []float32{1 << 24, 1 << 24, 1 << 24}, 0)
	wantOpError(t, ops.OpCumsum, []*ops.Tensor{ops.New(ops.F16, 4)}, nil, "cumsum: x is f16, want f32")
}

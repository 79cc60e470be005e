package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSqr(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{3, 2}, []float32{1, -2, 0.5, 3, -0.25, 0})
	want := []float32{1, 4, 0.25, 9, 0.0625, 0}
	opstest.CheckClose(t, mustOp(t, ops.OpSqr, []*ops.Tensor{x}, nil).ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpSqr, []*ops.Tensor{reftest.PermutedCopy(t, x)}, nil).ToF32(), want, 0)

	// f16: 1.1 is stored as 1.099609375; its square 1.2091407775878906
	// rounds to the f16 1.208984375.
	h := ops.FromF32(ops.F16, []int64{1}, []float32{1.1})
	y := mustOp(t, ops.OpSqr, []*ops.Tensor{h}, nil)
	if y.Type != ops.F16 || y.ToF32()[0] != 1.208984375 {
		t.Fatalf("f16 sqr = %s %v, want f16 1.208984375", y.Type, y.ToF32())
	}
	wantOpError(t, ops.OpSqr, []*ops.Tensor{ops.New(ops.I32, 4)}, nil, "sqr: x is i32, want f32 or f16")
}

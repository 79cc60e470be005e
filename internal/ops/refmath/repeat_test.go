package refmath

import (
	"errors"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestRepeat(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{2, 1}, []float32{1, 2})
	y := mustOp(t, ops.OpRepeat, []*ops.Tensor{x}, map[string]any{"ne": []any{4, 2}})
	if y.Ne != [ops.MaxDims]int64{4, 2, 1, 1} {
		t.Fatalf("shape %s", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{1, 2, 1, 2, 1, 2, 1, 2}, 0)
	m := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, 2, 3, 4})
	y = mustOp(t, ops.OpRepeat, []*ops.Tensor{reftest.PermutedCopy(t, m)}, map[string]any{"ne": []any{2, 2, 2}})
	opstest.CheckClose(t, y.ToF32(), []float32{1, 2, 3, 4, 1, 2, 3, 4}, 0)
	same := mustOp(t, ops.OpRepeat, []*ops.Tensor{m}, map[string]any{"ne": []any{2, 2}})
	opstest.CheckClose(t, same.ToF32(), []float32{1, 2, 3, 4}, 0)
	wantOpError(t, ops.OpRepeat, []*ops.Tensor{m}, map[string]any{"ne": []any{3, 2}}, "ne0 = 3 is not a multiple of x.ne0 = 2")
	// Any plain type is tiled as raw elements (i16 here, as test-backend-ops has it).
	yi := mustOp(t, ops.OpRepeat, []*ops.Tensor{ops.FromInts(ops.I16, []int64{2}, []int64{-7, 300})}, map[string]any{"ne": []any{4, 2}})
	for i, want := range []int64{-7, 300, -7, 300, -7, 300, -7, 300} {
		if got := yi.Int(int64(i%4), int64(i/4), 0, 0); got != want {
			t.Fatalf("i16 repeat[%d] = %d, want %d", i, got, want)
		}
	}
	info, _ := ops.Lookup("repeat")
	np, _ := info.Normalize(map[string]any{"ne": []any{64}})
	if _, err := Compute(info, []*ops.Tensor{ops.New(ops.Q8_0, 32)}, np); !errors.As(err, new(*ops.NoHostMathError)) {
		t.Errorf("q8_0 repeat: error %v, want a NoHostMathError", err)
	}
	wantOpError(t, ops.OpRepeat, []*ops.Tensor{m}, nil, "repeat: param ne: required")
}

// bf16 and i16 (ggml's CPU repeats them through its f16 path) are tiled as
// raw bytes.
func TestRepeatBF16I16(t *testing.T) {
	b := ops.FromF32(ops.BF16, []int64{2}, []float32{1.5, -3})
	y := mustOp(t, ops.OpRepeat, []*ops.Tensor{b}, map[string]any{"ne": []int64{4, 2}})
	opstest.CheckClose(t, y.ToF32(), []float32{1.5, -3, 1.5, -3, 1.5, -3, 1.5, -3}, 0)
	i := ops.FromInts(ops.I16, []int64{2}, []int64{-32768, 32767})
	y = mustOp(t, ops.OpRepeat, []*ops.Tensor{i}, map[string]any{"ne": []int64{2, 3}})
	for r := int64(0); r < 3; r++ {
		if y.Int(0, r, 0, 0) != -32768 || y.Int(1, r, 0, 0) != 32767 {
			t.Errorf("i16 row %d = %d, %d", r, y.Int(0, r, 0, 0), y.Int(1, r, 0, 0))
		}
	}
}

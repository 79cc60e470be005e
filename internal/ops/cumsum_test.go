package ops

import "testing"

func TestCumsum(t *testing.T) {
	x := FromF32(F32, []int64{4, 2}, []float32{1, 2, 3, 4, 0.5, -0.5, 2, -8})
	want := []float32{1, 3, 6, 10, 0.5, 0, 2, -6}
	checkClose(t, mustOp(t, OpCumsum, []*Tensor{x}, nil).ToF32(), want, 0)
	checkClose(t, mustOp(t, OpCumsum, []*Tensor{permutedCopy(t, x)}, nil).ToF32(), want, 0)

	// float32 accumulation: 2^24 + 1 + 1 stays 2^24 (each +1 rounds away).
	y := mustOp(t, OpCumsum, []*Tensor{FromF32(F32, []int64{3}, []float32{1 << 24, 1, 1})}, nil)
	checkClose(t, y.ToF32(), []float32{1 << 24, 1 << 24, 1 << 24}, 0)
	wantOpError(t, OpCumsum, []*Tensor{New(F16, 4)}, nil, "cumsum: x is f16, want f32")
}

package ops

import "testing"

func TestFill(t *testing.T) {
	x := FromF32(F32, []int64{3, 2}, randVals(1, 6, -1, 1))
	checkClose(t, mustOp(t, OpFill, []*Tensor{x}, map[string]any{"c": 2.5}).ToF32(), []float32{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, 0)
	checkClose(t, mustOp(t, OpFill, []*Tensor{x}, nil).ToF32(), make([]float32, 6), 0)
	h := mustOp(t, OpFill, []*Tensor{New(F16, 2)}, map[string]any{"c": 0.1})
	if h.Type != F16 {
		t.Fatalf("type %s, want f16", h.Type)
	}
	checkClose(t, h.ToF32(), []float32{RoundF16(0.1), RoundF16(0.1)}, 0)
	wantOpError(t, OpFill, []*Tensor{New(I32, 2)}, nil, "fill: x is i32, want f32 or f16")
}

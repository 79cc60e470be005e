package ops

import "testing"

func TestSqr(t *testing.T) {
	x := FromF32(F32, []int64{3, 2}, []float32{1, -2, 0.5, 3, -0.25, 0})
	want := []float32{1, 4, 0.25, 9, 0.0625, 0}
	checkClose(t, mustOp(t, OpSqr, []*Tensor{x}, nil).ToF32(), want, 0)
	checkClose(t, mustOp(t, OpSqr, []*Tensor{permutedCopy(t, x)}, nil).ToF32(), want, 0)

	// f16: 1.1 is stored as 1.099609375; its square 1.2091407775878906
	// rounds to the f16 1.208984375.
	h := FromF32(F16, []int64{1}, []float32{1.1})
	y := mustOp(t, OpSqr, []*Tensor{h}, nil)
	if y.Type != F16 || y.ToF32()[0] != 1.208984375 {
		t.Fatalf("f16 sqr = %s %v, want f16 1.208984375", y.Type, y.ToF32())
	}
	wantOpError(t, OpSqr, []*Tensor{New(I32, 4)}, nil, "sqr: x is i32, want f32 or f16")
}

package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSet(t *testing.T) {
	a := ops.FromF32(ops.F32, []int64{4, 3}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	b := ops.FromF32(ops.F32, []int64{2, 2}, []float32{-1, -2, -3, -4})
	tests := []struct {
		name string
		raw  map[string]any
		want []float32
	}{
		{"rows like a's, offset one row and one element", map[string]any{"offset": 20},
			[]float32{0, 1, 2, 3, 4, -1, -2, 7, 8, -3, -4, 11}},
		{"explicit stride", map[string]any{"nb1": 32, "offset": 0},
			[]float32{-1, -2, 2, 3, 4, 5, 6, 7, -3, -4, 10, 11}},
		{"not in place", map[string]any{"offset": 8, "inplace": false},
			[]float32{0, 1, -1, -2, 4, 5, -3, -4, 8, 9, 10, 11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opstest.CheckClose(t, mustOp(t, ops.OpSet, []*ops.Tensor{a, b}, tt.raw).ToF32(), tt.want, 0)
		})
	}
	// a as a strided view: the view offsets refer to a's logical layout.
	opstest.CheckClose(t, mustOp(t, ops.OpSet, []*ops.Tensor{reftest.PermutedCopy(t, a), b}, map[string]any{"offset": 20}).ToF32(), tests[0].want, 0)

	ia := ops.FromInts(ops.I32, []int64{3}, []int64{1, 2, 3})
	iy := mustOp(t, ops.OpSet, []*ops.Tensor{ia, ops.FromInts(ops.I32, []int64{1}, []int64{16777217})}, map[string]any{"offset": 8})
	if iy.Int(2, 0, 0, 0) != 16777217 || iy.Int(0, 0, 0, 0) != 1 {
		t.Errorf("i32 set = %d %d %d", iy.Int(0, 0, 0, 0), iy.Int(1, 0, 0, 0), iy.Int(2, 0, 0, 0))
	}
	wantOpError(t, ops.OpSet, []*ops.Tensor{a, b}, map[string]any{"offset": 40}, "reaches byte 64, a [4, 3, 1, 1] has 48 bytes")
	wantOpError(t, ops.OpSet, []*ops.Tensor{a, b}, map[string]any{"offset": 2}, "param offset: 2 is not a non-negative multiple of the element size 4")
	wantOpError(t, ops.OpSet, []*ops.Tensor{a, b}, map[string]any{"nb1": -4}, "param nb1")
	wantOpError(t, ops.OpSet, []*ops.Tensor{a, ops.New(ops.F16, 2)}, nil, "b is f16, want a's type f32")
	wantOpError(t, ops.OpSet, []*ops.Tensor{ops.New(ops.F16, 2), ops.New(ops.F16, 2)}, nil, "set: a is f16, want f32 or i32")
}

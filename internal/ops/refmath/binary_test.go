package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestBinary(t *testing.T) {
	a := ops.FromF32(ops.F32, []int64{4, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	tests := []struct {
		name string
		op   ops.Op
		a, b *ops.Tensor
		want []float32
	}{
		{"add same shape", ops.OpAdd, a, ops.FromF32(ops.F32, []int64{4, 2}, []float32{1, 1, 1, 1, 2, 2, 2, 2}), []float32{2, 3, 4, 5, 7, 8, 9, 10}},
		{"add row broadcast", ops.OpAdd, a, ops.FromF32(ops.F32, []int64{4}, []float32{10, 20, 30, 40}), []float32{11, 22, 33, 44, 15, 26, 37, 48}},
		{"sub scalar", ops.OpSub, a, ops.FromF32(ops.F32, []int64{1}, []float32{1}), []float32{0, 1, 2, 3, 4, 5, 6, 7}},
		{"mul column broadcast", ops.OpMul, a, ops.FromF32(ops.F32, []int64{1, 2}, []float32{2, -1}), []float32{2, 4, 6, 8, -5, -6, -7, -8}},
		{"mul ne0 repeat", ops.OpMul, a, ops.FromF32(ops.F32, []int64{2}, []float32{1, 0}), []float32{1, 0, 3, 0, 5, 0, 7, 0}},
		{"sub f16 b", ops.OpSub, a, ops.FromF32(ops.F16, []int64{4}, []float32{0.5, 0.5, 0.5, 0.5}), []float32{0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}},
		{"add strided a", ops.OpAdd, reftest.PermutedCopy(t, a), ops.FromF32(ops.F32, []int64{4}, []float32{1, 1, 1, 1}), []float32{2, 3, 4, 5, 6, 7, 8, 9}},
		{"mul strided b", ops.OpMul, a, reftest.PermutedCopy(t, ops.FromF32(ops.F32, []int64{4, 2}, []float32{1, 2, 1, 2, 0, 1, 0, 1})), []float32{1, 4, 3, 8, 0, 6, 0, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := mustOp(t, tt.op, []*ops.Tensor{tt.a, tt.b}, nil)
			if y.Type != tt.a.Type || y.Ne != tt.a.Ne {
				t.Fatalf("result %s %s", y.Type, y.ShapeString())
			}
			opstest.CheckClose(t, y.ToF32(), tt.want, 0)
		})
	}
	t.Run("f16 result", func(t *testing.T) {
		h := ops.FromF32(ops.F16, []int64{2}, []float32{1, 2})
		y := mustOp(t, ops.OpAdd, []*ops.Tensor{h, ops.FromF32(ops.F32, []int64{1}, []float32{1.0 / 3})}, nil)
		if y.Type != ops.F16 {
			t.Fatalf("type %s", y.Type)
		}
		opstest.CheckClose(t, y.ToF32(), []float32{ops.RoundF16(4.0 / 3), ops.RoundF16(7.0 / 3)}, 0)
	})
	t.Run("3d broadcast", func(t *testing.T) {
		x := ops.FromF32(ops.F32, []int64{1, 2, 2}, []float32{1, 2, 3, 4})
		b := ops.FromF32(ops.F32, []int64{1, 1, 2}, []float32{10, 20})
		opstest.CheckClose(t, mustOp(t, ops.OpAdd, []*ops.Tensor{x, b}, nil).ToF32(), []float32{11, 12, 23, 24}, 0)
	})
}

func TestBinaryErrors(t *testing.T) {
	a := ops.New(ops.F32, 4, 2)
	wantOpError(t, ops.OpAdd, []*ops.Tensor{a, ops.New(ops.F32, 3)}, nil, "add: b [3, 1, 1, 1] cannot be repeated over a [4, 2, 1, 1]: a.ne0 = 4 is not a multiple of b.ne0 = 3")
	wantOpError(t, ops.OpMul, []*ops.Tensor{a, ops.New(ops.F32, 4, 3)}, nil, "mul:", "a.ne1 = 2 is not a multiple of b.ne1 = 3")
	wantOpError(t, ops.OpSub, []*ops.Tensor{a, ops.New(ops.I32, 4)}, nil, "sub: b is i32, want f32 or f16")
	wantOpError(t, ops.OpAdd, []*ops.Tensor{ops.New(ops.Q8_0, 32), ops.New(ops.F32, 32)}, nil, "a is q8_0")
}

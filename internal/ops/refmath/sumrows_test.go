package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSumRowsMean(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{4, 3}, []float32{1, 2, 3, 4, -1, -1, -1, -1, 0.5, 0.25, 0, 0})
	tests := []struct {
		name string
		op   ops.Op
		x    *ops.Tensor
		want []float32
	}{
		{"sum_rows", ops.OpSumRows, x, []float32{10, -4, 0.75}},
		{"mean", ops.OpMean, x, []float32{2.5, -1, 0.1875}},
		{"sum_rows strided", ops.OpSumRows, reftest.PermutedCopy(t, x), []float32{10, -4, 0.75}},
		{"mean strided", ops.OpMean, reftest.PermutedCopy(t, x), []float32{2.5, -1, 0.1875}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := mustOp(t, tt.op, []*ops.Tensor{tt.x}, nil)
			if y.Ne != [ops.MaxDims]int64{1, 3, 1, 1} {
				t.Fatalf("shape %s, want [1, 3, 1, 1]", y.ShapeString())
			}
			opstest.CheckClose(t, y.ToF32(), tt.want, 0)
		})
	}

	// The sum is float64 before rounding: 4096 values of 1 + 2^-20 sum to
	// 4096 + 2^-8 (a float32), while a float32 loop loses the 2^-20 parts
	// once the running sum passes 16.
	n := 1 << 12
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = 1 + 1.0/(1<<20)
	}
	y := mustOp(t, ops.OpSumRows, []*ops.Tensor{ops.FromF32(ops.F32, []int64{int64(n)}, vals)}, nil)
	if want := float32(float64(n) * float64(vals[0])); y.ToF32()[0] != want {
		t.Errorf("sum = %v, want the float64 sum %v", y.ToF32()[0], want)
	}
	m := mustOp(t, ops.OpMean, []*ops.Tensor{ops.FromF32(ops.F32, []int64{3}, []float32{1, 1, 2})}, nil)
	if want := float32(4) / 3; m.ToF32()[0] != want || math.IsNaN(float64(want)) {
		t.Errorf("mean = %v, want %v", m.ToF32()[0], want)
	}
	wantOpError(t, ops.OpSumRows, []*ops.Tensor{ops.New(ops.F16, 4)}, nil, "sum_rows: x is f16, want f32")
	wantOpError(t, ops.OpMean, []*ops.Tensor{ops.New(ops.I32, 4)}, nil, "mean: x is i32, want f32")
}

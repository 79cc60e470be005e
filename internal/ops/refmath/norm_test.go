package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestNorms(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{4, 2}, []float32{1, 2, 3, 4, -2, 0, 2, 0})
	// Row 0: Σx² = 30, mean 7.5; mean 2.5, variance 1.25, ‖x‖ = √30.
	// Row 1: Σx² = 8, mean 2; mean 0, variance 2, ‖x‖ = √8.
	r0 := 1 / math.Sqrt(7.5+1e-5)
	r1 := 1 / math.Sqrt(2+1e-5)
	n0 := 1 / math.Sqrt(1.25+1e-5)
	n1 := 1 / math.Sqrt(2+1e-5)
	tests := []struct {
		name string
		op   ops.Op
		x    *ops.Tensor
		eps  float64
		want []float64
	}{
		{"rms_norm", ops.OpRMSNorm, x, 1e-5, []float64{r0, 2 * r0, 3 * r0, 4 * r0, -2 * r1, 0, 2 * r1, 0}},
		{"norm", ops.OpNorm, x, 1e-5, []float64{-1.5 * n0, -0.5 * n0, 0.5 * n0, 1.5 * n0, -2 * n1, 0, 2 * n1, 0}},
		{"l2_norm", ops.OpL2Norm, x, 1e-5, []float64{1 / math.Sqrt(30), 2 / math.Sqrt(30), 3 / math.Sqrt(30), 4 / math.Sqrt(30), -2 / math.Sqrt(8), 0, 2 / math.Sqrt(8), 0}},
		{"l2_norm eps floor", ops.OpL2Norm, ops.FromF32(ops.F32, []int64{2}, []float32{0.001, 0}), 0.5, []float64{0.002, 0}},
		{"rms_norm strided", ops.OpRMSNorm, reftest.PermutedCopy(t, x), 1e-5, []float64{r0, 2 * r0, 3 * r0, 4 * r0, -2 * r1, 0, 2 * r1, 0}},
		{"rms_norm large eps", ops.OpRMSNorm, ops.FromF32(ops.F32, []int64{2}, []float32{3, 4}), 3.5, []float64{3 / math.Sqrt(16), 4 / math.Sqrt(16)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := mustOp(t, tt.op, []*ops.Tensor{tt.x}, map[string]any{"eps": tt.eps})
			want := make([]float32, len(tt.want))
			for i, v := range tt.want {
				want[i] = float32(v)
			}
			opstest.CheckClose(t, y.ToF32(), want, 2e-7)
		})
	}
	wantOpError(t, ops.OpRMSNorm, []*ops.Tensor{ops.New(ops.F16, 4)}, nil, "rms_norm: x is f16, want f32")
	wantOpError(t, ops.OpNorm, []*ops.Tensor{ops.New(ops.I32, 4)}, nil, "norm: x is i32, want f32")
}

func TestScale(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{3, 2}, []float32{1, 2, 3, -1, -2, -3})
	tests := []struct {
		name string
		x    *ops.Tensor
		raw  map[string]any
		want []float32
	}{
		{"scale", x, map[string]any{"scale": 2}, []float32{2, 4, 6, -2, -4, -6}},
		{"scale and bias", x, map[string]any{"scale": 0.5, "bias": 1}, []float32{1.5, 2, 2.5, 0.5, 0, -0.5}},
		{"defaults", x, nil, []float32{1, 2, 3, -1, -2, -3}},
		{"strided", reftest.PermutedCopy(t, x), map[string]any{"scale": -1, "bias": 0.25}, []float32{-0.75, -1.75, -2.75, 1.25, 2.25, 3.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opstest.CheckClose(t, mustOp(t, ops.OpScale, []*ops.Tensor{tt.x}, tt.raw).ToF32(), tt.want, 0)
		})
	}
	wantOpError(t, ops.OpScale, []*ops.Tensor{ops.New(ops.F16, 4)}, nil, "scale: x is f16, want f32")
}

func BenchmarkRMSNorm(b *testing.B) {
	x := ops.FromF32(ops.F32, []int64{4096, 512}, opstest.RandVals(1, 4096*512, -1, 1))
	dst := ops.New(ops.F32, 4096, 512)
	info, _ := ops.Lookup("rms_norm")
	p, _ := info.Normalize(map[string]any{"eps": 1e-5})
	b.SetBytes(int64(2 * len(x.Buf)))
	b.ResetTimer()
	for b.Loop() {
		if err := Run(info, dst, []*ops.Tensor{x}, p); err != nil {
			b.Fatal(err)
		}
	}
}

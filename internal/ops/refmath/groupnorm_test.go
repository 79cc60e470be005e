package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestGroupNorm(t *testing.T) {
	// 2x1 spatial, 3 channels, 2 groups: channels {0, 1} and {2}.
	x := ops.FromF32(ops.F32, []int64{2, 1, 3, 2}, []float32{1, 2, 3, 4, 5, 7, -1, 1, 0, 0, 2, 2})
	const eps = 1e-5
	norm := func(vals ...float64) []float64 {
		var m, v float64
		for _, x := range vals {
			m += x
		}
		m /= float64(len(vals))
		for _, x := range vals {
			v += (x - m) * (x - m)
		}
		v /= float64(len(vals))
		out := make([]float64, len(vals))
		for i, x := range vals {
			out[i] = (x - m) / math.Sqrt(v+eps)
		}
		return out
	}
	var want []float32
	for _, g := range [][]float64{norm(1, 2, 3, 4), norm(5, 7), norm(-1, 1, 0, 0), norm(2, 2)} {
		for _, v := range g {
			want = append(want, float32(v))
		}
	}
	y := mustOp(t, ops.OpGroupNorm, []*ops.Tensor{x}, map[string]any{"n_groups": 2, "eps": eps})
	opstest.CheckClose(t, y.ToF32(), want, 2e-6)
	opstest.CheckClose(t, mustOp(t, ops.OpGroupNorm, []*ops.Tensor{reftest.PermutedCopy(t, x)}, map[string]any{"n_groups": 2, "eps": eps}).ToF32(), y.ToF32(), 0)
	// More groups than channels: every channel is its own group.
	y4 := mustOp(t, ops.OpGroupNorm, []*ops.Tensor{x}, map[string]any{"n_groups": 5, "eps": eps})
	y3 := mustOp(t, ops.OpGroupNorm, []*ops.Tensor{x}, map[string]any{"n_groups": 3, "eps": eps})
	opstest.CheckClose(t, y4.ToF32(), y3.ToF32(), 0)
	wantOpError(t, ops.OpGroupNorm, []*ops.Tensor{x}, map[string]any{"n_groups": 0}, "param n_groups: 0, want a positive number of groups")
	wantOpError(t, ops.OpGroupNorm, []*ops.Tensor{x}, nil, "param n_groups: required")
	wantOpError(t, ops.OpGroupNorm, []*ops.Tensor{ops.New(ops.F16, 2)}, map[string]any{"n_groups": 1}, "group_norm: x is f16, want f32")
}

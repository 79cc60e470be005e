package refmath

import (
	"runtime"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestNewOpsParallelDeterministic runs the ops of this change on shapes
// large enough to split across goroutines and checks that the result is
// bit-identical to a single-goroutine run (and, under -race, that the
// workers do not share state).
func TestNewOpsParallelDeterministic(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{256, 64, 4}, opstest.RandVals(51, 256*64*4, -1, 1))
	img := ops.FromF32(ops.F32, []int64{32, 32, 16, 1}, opstest.RandVals(52, 32*32*16, -1, 1))
	kernel := ops.FromF32(ops.F32, []int64{3, 3, 16, 16}, opstest.RandVals(53, 3*3*16*16, -1, 1))
	cases := []struct {
		op   ops.Op
		srcs []*ops.Tensor
		raw  map[string]any
	}{
		{ops.OpSqr, []*ops.Tensor{x}, nil},
		{ops.OpCumsum, []*ops.Tensor{x}, nil},
		{ops.OpSumRows, []*ops.Tensor{x}, nil},
		{ops.OpGroupNorm, []*ops.Tensor{x}, map[string]any{"n_groups": 2}},
		{ops.OpConcat, []*ops.Tensor{x, x}, map[string]any{"dim": 1}},
		{ops.OpRepeat, []*ops.Tensor{x}, map[string]any{"ne": []any{256, 64, 8}}},
		{ops.OpPad, []*ops.Tensor{x}, map[string]any{"lp": []any{0, 2, 0, 0}, "rp": []any{0, 1, 1, 0}}},
		{ops.OpTri, []*ops.Tensor{ops.FromF32(ops.F32, []int64{256, 256}, opstest.RandVals(54, 256*256, -1, 1))}, nil},
		{ops.OpIm2col, []*ops.Tensor{kernel, img}, map[string]any{"p0": 1, "p1": 1}},
		{ops.OpConv2D, []*ops.Tensor{kernel, img}, map[string]any{"p0": 1, "p1": 1}},
		{ops.OpRWKVWKV6, rwkvBig6(), nil},
		{ops.OpGatedDeltaNet, gdnBig(), map[string]any{"K": 2}},
	}
	for _, tc := range cases {
		t.Run(string(tc.op), func(t *testing.T) {
			prev := runtime.GOMAXPROCS(1)
			serial := mustOp(t, tc.op, tc.srcs, tc.raw)
			runtime.GOMAXPROCS(max(prev, 4))
			par := mustOp(t, tc.op, tc.srcs, tc.raw)
			runtime.GOMAXPROCS(prev)
			opstest.CheckClose(t, par.ToF32(), serial.ToF32(), 0)
		})
	}
}

func rwkvBig6() []*ops.Tensor {
	const s, h, tok, n = 64, 8, 8, 2
	shape := []int64{s, h, tok}
	return []*ops.Tensor{
		ops.FromF32(ops.F32, shape, opstest.RandVals(61, s*h*tok, -1, 1)), ops.FromF32(ops.F32, shape, opstest.RandVals(62, s*h*tok, -1, 1)),
		ops.FromF32(ops.F32, shape, opstest.RandVals(63, s*h*tok, -1, 1)), ops.FromF32(ops.F32, []int64{s, h}, opstest.RandVals(64, s*h, -1, 1)),
		ops.FromF32(ops.F32, shape, opstest.RandVals(65, s*h*tok, 0.5, 1)), ops.FromF32(ops.F32, []int64{s * s * h, n}, opstest.RandVals(66, s*s*h*n, -1, 1)),
	}
}

func gdnBig() []*ops.Tensor {
	const sv, h, tok, n = 64, 8, 4, 2
	return []*ops.Tensor{
		ops.FromF32(ops.F32, []int64{sv, h, tok, n}, opstest.RandVals(71, sv*h*tok*n, -1, 1)),
		ops.FromF32(ops.F32, []int64{sv, h, tok, n}, opstest.RandVals(72, sv*h*tok*n, -1, 1)),
		ops.FromF32(ops.F32, []int64{sv, h, tok, n}, opstest.RandVals(73, sv*h*tok*n, -1, 1)),
		ops.FromF32(ops.F32, []int64{1, h, tok, n}, opstest.RandVals(74, h*tok*n, -0.5, 0)),
		ops.FromF32(ops.F32, []int64{1, h, tok, n}, opstest.RandVals(75, h*tok*n, 0, 1)),
		ops.FromF32(ops.F32, []int64{sv, sv, h, n}, opstest.RandVals(76, sv*sv*h*n, -0.1, 0.1)),
	}
}

package ops

import (
	"runtime"
	"testing"
)

// TestNewOpsParallelDeterministic runs the ops of this change on shapes
// large enough to split across goroutines and checks that the result is
// bit-identical to a single-goroutine run (and, under -race, that the
// workers do not share state).
func TestNewOpsParallelDeterministic(t *testing.T) {
	x := FromF32(F32, []int64{256, 64, 4}, randVals(51, 256*64*4, -1, 1))
	img := FromF32(F32, []int64{32, 32, 16, 1}, randVals(52, 32*32*16, -1, 1))
	kernel := FromF32(F32, []int64{3, 3, 16, 16}, randVals(53, 3*3*16*16, -1, 1))
	cases := []struct {
		op   Op
		srcs []*Tensor
		raw  map[string]any
	}{
		{OpSqr, []*Tensor{x}, nil},
		{OpCumsum, []*Tensor{x}, nil},
		{OpSumRows, []*Tensor{x}, nil},
		{OpGroupNorm, []*Tensor{x}, map[string]any{"n_groups": 2}},
		{OpConcat, []*Tensor{x, x}, map[string]any{"dim": 1}},
		{OpRepeat, []*Tensor{x}, map[string]any{"ne": []any{256, 64, 8}}},
		{OpPad, []*Tensor{x}, map[string]any{"lp": []any{0, 2, 0, 0}, "rp": []any{0, 1, 1, 0}}},
		{OpTri, []*Tensor{FromF32(F32, []int64{256, 256}, randVals(54, 256*256, -1, 1))}, nil},
		{OpIm2col, []*Tensor{kernel, img}, map[string]any{"p0": 1, "p1": 1}},
		{OpConv2D, []*Tensor{kernel, img}, map[string]any{"p0": 1, "p1": 1}},
		{OpRWKVWKV6, rwkvBig6(), nil},
		{OpGatedDeltaNet, gdnBig(), map[string]any{"K": 2}},
	}
	for _, tc := range cases {
		t.Run(string(tc.op), func(t *testing.T) {
			prev := runtime.GOMAXPROCS(1)
			serial := mustOp(t, tc.op, tc.srcs, tc.raw)
			runtime.GOMAXPROCS(max(prev, 4))
			par := mustOp(t, tc.op, tc.srcs, tc.raw)
			runtime.GOMAXPROCS(prev)
			checkClose(t, par.ToF32(), serial.ToF32(), 0)
		})
	}
}

func rwkvBig6() []*Tensor {
	const s, h, tok, n = 64, 8, 8, 2
	shape := []int64{s, h, tok}
	return []*Tensor{
		FromF32(F32, shape, randVals(61, s*h*tok, -1, 1)), FromF32(F32, shape, randVals(62, s*h*tok, -1, 1)),
		FromF32(F32, shape, randVals(63, s*h*tok, -1, 1)), FromF32(F32, []int64{s, h}, randVals(64, s*h, -1, 1)),
		FromF32(F32, shape, randVals(65, s*h*tok, 0.5, 1)), FromF32(F32, []int64{s * s * h, n}, randVals(66, s*s*h*n, -1, 1)),
	}
}

func gdnBig() []*Tensor {
	const sv, h, tok, n = 64, 8, 4, 2
	return []*Tensor{
		FromF32(F32, []int64{sv, h, tok, n}, randVals(71, sv*h*tok*n, -1, 1)),
		FromF32(F32, []int64{sv, h, tok, n}, randVals(72, sv*h*tok*n, -1, 1)),
		FromF32(F32, []int64{sv, h, tok, n}, randVals(73, sv*h*tok*n, -1, 1)),
		FromF32(F32, []int64{1, h, tok, n}, randVals(74, h*tok*n, -0.5, 0)),
		FromF32(F32, []int64{1, h, tok, n}, randVals(75, h*tok*n, 0, 1)),
		FromF32(F32, []int64{sv, sv, h, n}, randVals(76, sv*sv*h*n, -0.1, 0.1)),
	}
}

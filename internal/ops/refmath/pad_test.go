package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestPad(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{2, 2}, []float32{1, 2, 3, 4})
	y := mustOp(t, ops.OpPad, []*ops.Tensor{x}, map[string]any{"lp": []any{1, 0, 0, 0}, "rp": []any{0, 1, 1, 0}})
	if y.Ne != [ops.MaxDims]int64{3, 3, 2, 1} {
		t.Fatalf("shape %s, want [3, 3, 2, 1]", y.ShapeString())
	}
	want := []float32{
		0, 1, 2, 0, 3, 4, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0,
	}
	opstest.CheckClose(t, y.ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpPad, []*ops.Tensor{reftest.PermutedCopy(t, x)}, map[string]any{"lp": []any{1, 0, 0, 0}, "rp": []any{0, 1, 1, 0}}).ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpPad, []*ops.Tensor{x}, nil).ToF32(), []float32{1, 2, 3, 4}, 0)
	wantOpError(t, ops.OpPad, []*ops.Tensor{x}, map[string]any{"lp": []any{-1, 0, 0, 0}}, "param lp: negative padding -1 in dim 0")
	wantOpError(t, ops.OpPad, []*ops.Tensor{x}, map[string]any{"lp": []any{1}}, "param lp: has 1 entries, want 4")
	wantOpError(t, ops.OpPad, []*ops.Tensor{ops.New(ops.F16, 2)}, nil, "pad: x is f16, want f32")
}

func TestPadCircular(t *testing.T) {
	// x [3, 2]; lp = (2, 1), rp = (1, 0): dst[i0, i1] = x[(i0-2) mod 3, (i1-1) mod 2].
	xs := []float32{1, 2, 3, 4, 5, 6}
	x := ops.FromF32(ops.F32, []int64{3, 2}, xs)
	y := mustOp(t, ops.OpPad, []*ops.Tensor{x}, map[string]any{"lp": []any{2, 1, 0, 0}, "rp": []any{1, 0, 0, 0}, "circular": true})
	// An empty x has nothing to wrap around (FuzzCatalog found the
	// modulo by zero: testdata/fuzz/FuzzCatalog/adc73b599d8bf95f).
	wantOpError(t, ops.OpPad, []*ops.Tensor{ops.New(ops.F32, 3, 0)}, map[string]any{"lp": []any{0, 1, 0, 0}, "rp": []any{0, 0, 0, 0}, "circular": true}, "no elements")
	if y.Ne != [ops.MaxDims]int64{6, 3, 1, 1} {
		t.Fatalf("shape %s", y.ShapeString())
	}
	var want []float32
	for i1 := 0; i1 < 3; i1++ {
		for i0 := 0; i0 < 6; i0++ {
			want = append(want, xs[((i1+1)%2)*3+(i0+1)%3])
		}
	}
	opstest.CheckClose(t, y.ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpPad, []*ops.Tensor{reftest.PermutedCopy(t, x)}, map[string]any{"lp": []any{2, 1, 0, 0}, "rp": []any{1, 0, 0, 0}, "circular": true}).ToF32(), want, 0)
}

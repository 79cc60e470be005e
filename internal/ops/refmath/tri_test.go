package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestDiagTri(t *testing.T) {
	v := ops.FromF32(ops.F32, []int64{3, 1, 2}, []float32{1, 2, 3, 4, 5, 6})
	d := mustOp(t, ops.OpDiag, []*ops.Tensor{v}, nil)
	if d.Ne != [ops.MaxDims]int64{3, 3, 2, 1} {
		t.Fatalf("diag shape %s", d.ShapeString())
	}
	opstest.CheckClose(t, d.ToF32(), []float32{1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0, 0, 0, 6}, 0)
	wantOpError(t, ops.OpDiag, []*ops.Tensor{ops.New(ops.F32, 3, 2)}, nil, "diag: x [3, 2, 1, 1] has ne1 = 2, want 1")

	m := ops.FromF32(ops.F32, []int64{3, 3}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	tests := []struct {
		typ  string
		want []float32
	}{
		{"lower", []float32{0, 0, 0, 4, 0, 0, 7, 8, 0}},
		{"lower_diag", []float32{1, 0, 0, 4, 5, 0, 7, 8, 9}},
		{"upper", []float32{0, 2, 3, 0, 0, 6, 0, 0, 0}},
		{"upper_diag", []float32{1, 2, 3, 0, 5, 6, 0, 0, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			opstest.CheckClose(t, mustOp(t, ops.OpTri, []*ops.Tensor{m}, map[string]any{"type": tt.typ}).ToF32(), tt.want, 0)
		})
	}
	// Transposed input: the mask applies to the logical (i0, i1) index.
	opstest.CheckClose(t, mustOp(t, ops.OpTri, []*ops.Tensor{reftest.PermutedCopy(t, m)}, nil).ToF32(), tests[0].want, 0)
	wantOpError(t, ops.OpTri, []*ops.Tensor{ops.New(ops.F32, 3, 2)}, nil, "tri: x [3, 2, 1, 1] is not square")
	wantOpError(t, ops.OpTri, []*ops.Tensor{m}, map[string]any{"type": "diag"}, `param type: unknown value "diag"`)
}

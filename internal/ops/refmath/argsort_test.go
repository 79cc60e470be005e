package refmath

import (
	"cmp"
	"slices"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestHostSum(t *testing.T) {
	xs := opstest.RandVals(6, 11*5*6, -0.9, 1.1)
	var want float64
	for _, v := range xs {
		want += float64(v)
	}
	x := ops.FromF32(ops.F32, []int64{11, 5, 6}, xs)
	got := mustOp(t, ops.OpSum, []*ops.Tensor{x}, nil)
	if got.Ne != [ops.MaxDims]int64{1, 1, 1, 1} {
		t.Fatalf("sum shape %v", got.Ne)
	}
	opstest.CheckClose(t, got.ToF32(), []float32{float32(want)}, 1e-6)
	opstest.CheckClose(t, mustOp(t, ops.OpSum, []*ops.Tensor{reftest.PermutedCopy(t, x)}, nil).ToF32(), []float32{float32(want)}, 1e-6)
}

func TestHostArgmax(t *testing.T) {
	// Row 1 has its maximum 5 twice: ggml returns the last index.
	x := ops.FromF32(ops.F32, []int64{4, 3}, []float32{1, 3, 2, 0, 5, -1, 5, 2, -3, -2, -1, -4})
	got := mustOp(t, ops.OpArgmax, []*ops.Tensor{x}, nil)
	if got.Type != ops.I32 || got.Ne != [ops.MaxDims]int64{3, 1, 1, 1} {
		t.Fatalf("argmax is %s %v", got.Type, got.Ne)
	}
	opstest.CheckClose(t, got.ToF32(), []float32{1, 2, 2}, 0)
	wantOpError(t, ops.OpArgmax, []*ops.Tensor{ops.New(ops.F32, 4, 3, 2)}, nil, "not a matrix")
}

func TestHostCountEqual(t *testing.T) {
	a := ops.FromInts(ops.I32, []int64{3, 2}, []int64{1, 2, 3, 4, 5, 6})
	b := ops.FromInts(ops.I32, []int64{3, 2}, []int64{1, 0, 3, 4, 0, 6})
	got := mustOp(t, ops.OpCountEqual, []*ops.Tensor{a, b}, nil)
	if got.Type != ops.I64 || got.Int(0, 0, 0, 0) != 4 {
		t.Fatalf("count_equal = %s %d, want i64 4", got.Type, got.Int(0, 0, 0, 0))
	}
}

// sortIdx is an independent argsort of one row: indices ordered by value,
// ties by index.
func sortIdx(row []float32, desc bool) []int {
	idx := make([]int, len(row))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if desc {
			return cmp.Compare(row[b], row[a])
		}
		return cmp.Compare(row[a], row[b])
	})
	return idx
}

func TestHostArgsortTopK(t *testing.T) {
	const n0, rows = 9, 4
	xs := opstest.RandVals(7, n0*rows, -5, 5)
	xs[3], xs[7] = 1.5, 1.5 // a tie in row 0
	x := ops.FromF32(ops.F32, []int64{n0, rows}, xs)
	for _, order := range []string{"asc", "desc"} {
		got := mustOp(t, ops.OpArgsort, []*ops.Tensor{x}, map[string]any{"order": order})
		for r := 0; r < rows; r++ {
			want := sortIdx(xs[r*n0:(r+1)*n0], order == "desc")
			for i, w := range want {
				if g := got.Int(int64(i), int64(r), 0, 0); g != int64(w) {
					t.Fatalf("argsort %s row %d: index %d = %d, want %d (%v)", order, r, i, g, w, want)
				}
			}
		}
	}
	const k = 4
	got := mustOp(t, ops.OpTopK, []*ops.Tensor{x}, map[string]any{"k": k})
	if got.Ne != [ops.MaxDims]int64{k, rows, 1, 1} || got.Type != ops.I32 {
		t.Fatalf("top_k is %s %v", got.Type, got.Ne)
	}
	for r := 0; r < rows; r++ {
		want := sortIdx(xs[r*n0:(r+1)*n0], true)[:k]
		want[0], want[1] = want[1], want[0] // the CPU swaps the first two
		for i, w := range want {
			if g := got.Int(int64(i), int64(r), 0, 0); g != int64(w) {
				t.Fatalf("top_k row %d: %d = %d, want %d (%v)", r, i, g, w, want)
			}
		}
	}
	wantOpError(t, ops.OpTopK, []*ops.Tensor{x}, map[string]any{"k": 10}, "k")
}

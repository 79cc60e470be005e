package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestSolveTri(t *testing.T) {
	// A = [[2, 0], [1, 4]] (row-major), B = [[2, 4], [5, 6]] (n = 2 rows,
	// k = 2 columns). X row 0 = B/2 = [1, 2]; row 1 = (B1 - 1·X0)/4 = [1, 1].
	a := ops.FromF32(ops.F32, []int64{2, 2}, []float32{2, 0, 1, 4})
	b := ops.FromF32(ops.F32, []int64{2, 2}, []float32{2, 4, 5, 6})
	x := mustOp(t, ops.OpSolveTri, []*ops.Tensor{a, b}, nil)
	opstest.CheckClose(t, x.ToF32(), []float32{1, 2, 1, 1}, 0)

	// A random batched system, checked by multiplying back in float64.
	const n, k = 5, 3
	av := opstest.RandVals(2, n*n*2, -1, 1)
	for bi := 0; bi < 2; bi++ {
		for i := 0; i < n; i++ {
			av[bi*n*n+i*n+i] = 2 + av[bi*n*n+i*n+i] // well conditioned
			for j := i + 1; j < n; j++ {
				av[bi*n*n+i*n+j] = 123 // above the diagonal: never read
			}
		}
	}
	bv := opstest.RandVals(3, k*n*2, -1, 1)
	A := ops.FromF32(ops.F32, []int64{n, n, 2}, av)
	B := ops.FromF32(ops.F32, []int64{k, n, 2}, bv)
	X := mustOp(t, ops.OpSolveTri, []*ops.Tensor{A, B}, map[string]any{"left": true, "lower": true, "uni": false})
	xv := X.ToF32()
	for bi := 0; bi < 2; bi++ {
		for i := 0; i < n; i++ {
			for c := 0; c < k; c++ {
				var s float64
				for j := 0; j <= i; j++ {
					s += float64(av[bi*n*n+i*n+j]) * float64(xv[bi*k*n+j*k+c])
				}
				if want := float64(bv[bi*k*n+i*k+c]); math.Abs(s-want) > 1e-5 {
					t.Fatalf("batch %d: (A·X)[%d][%d] = %v, want %v", bi, i, c, s, want)
				}
			}
		}
	}
	// Strided B gives the same X.
	opstest.CheckClose(t, mustOp(t, ops.OpSolveTri, []*ops.Tensor{A, reftest.PermutedCopy(t, B)}, nil).ToF32(), xv, 0)

	wantOpError(t, ops.OpSolveTri, []*ops.Tensor{a, b}, map[string]any{"uni": true}, "ggml implements only left=true, lower=true, uni=false")
	wantOpError(t, ops.OpSolveTri, []*ops.Tensor{ops.New(ops.F32, 3, 2), b}, nil, "a [3, 2, 1, 1] is not square")
	wantOpError(t, ops.OpSolveTri, []*ops.Tensor{a, ops.New(ops.F32, 2, 3)}, nil, "b.ne1 = 3 != a.ne1 = 2")
	wantOpError(t, ops.OpSolveTri, []*ops.Tensor{a, ops.New(ops.F32, 2, 2, 2)}, nil, "batch dims differ")
}

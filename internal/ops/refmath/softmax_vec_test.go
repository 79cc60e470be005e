package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/attn"
)

// TestSoftMaxLongRows: soft_max over 4096-wide rows (the vector lanes'
// order of the sum, where the build and CPU have them, and a tail that
// is not a multiple of 8) with a scale, an f32 mask holding -inf and a
// per-head ALiBi slope, against softmax64 computed in float64 from the
// same float32 inputs.
func TestSoftMaxLongRows(t *testing.T) {
	for _, n0 := range []int{4096, 4099} {
		const n1, n2 = 3, 4
		xv := opstest.RandVals(81, n0*n1*n2, -20, 20)
		mv := opstest.RandVals(82, n0*n1, -2, 0)
		for i := range mv {
			if i%13 == 5 {
				mv[i] = float32(math.Inf(-1))
			}
		}
		x := ops.FromF32(ops.F32, []int64{int64(n0), n1, n2}, xv)
		mask := ops.FromF32(ops.F32, []int64{int64(n0), n1}, mv)
		const scale, maxBias = 0.25, 8
		got := mustOp(t, ops.OpSoftMax, []*ops.Tensor{x, mask}, map[string]any{"scale": scale, "max_bias": maxBias}).ToF32()
		slope := attn.AlibiSlopes(maxBias, n2)
		for h := 0; h < n2; h++ {
			for i := 0; i < n1; i++ {
				w := make([]float64, n0)
				for j := range w {
					w[j] = float64(xv[(h*n1+i)*n0+j])*scale + float64(slope(int64(h)))*float64(mv[i*n0+j])
				}
				want := softmax64(w, nil)
				row := got[(h*n1+i)*n0 : (h*n1+i+1)*n0]
				for j := range want {
					if d := math.Abs(float64(row[j]) - float64(want[j])); d > 2e-6*math.Max(float64(want[j]), 1e-30) && d > 1e-12 {
						t.Fatalf("n0 %d head %d row %d [%d]: got %g, want %g", n0, h, i, j, row[j], want[j])
					}
				}
			}
		}
	}
}

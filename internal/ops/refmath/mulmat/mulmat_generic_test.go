package mulmat

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/opstest"
)

// genericWeightTypes have no matmul kernel of their own.
var genericWeightTypes = []ops.Type{ops.BF16, ops.Q4_1, ops.Q5_0, ops.Q5_1, ops.Q2_K, ops.Q3_K, ops.Q5_K, ops.Q6_K, ops.F64, ops.Q1_0, ops.Q2_0, ops.TQ1_0, ops.TQ2_0, ops.MXFP4, ops.NVFP4, ops.IQ4_NL, ops.IQ4_XS}

// mul_mat and mul_mat_id on weights of the generic path: the products of
// the dequantized weights (DequantizeRow, checked against ggml's own in
// TestCodecsMatchGGML) with the activations (rounded to bf16 for bf16
// weights), summed in float64 here.
func TestMulMatGenericTypes(t *testing.T) {
	const k, m, n = 512, 37, 5 // m spans three row tiles; n one group of four columns and one more
	av := opstest.RandVals(21, k*m*2, -1, 1)
	bv := opstest.RandVals(22, k*n*2, -1, 1)
	for _, wt := range genericWeightTypes {
		t.Run(wt.String(), func(t *testing.T) {
			a := ops.FromF32(wt, []int64{k, m, 2}, av)
			b := ops.FromF32(ops.F32, []int64{k, n, 2}, bv)
			got := mustOp(t, ops.OpMulMat, []*ops.Tensor{a, b}, nil)
			deq := a.ToF32()
			act := func(i int) float64 {
				if wt == ops.BF16 {
					return float64(codec.BF16ToF32(codec.F32ToBF16(bv[i])))
				}
				return float64(bv[i])
			}
			for i2 := 0; i2 < 2; i2++ {
				for j := 0; j < n; j++ {
					for i := 0; i < m; i++ {
						var s, mag float64
						for l := 0; l < k; l++ {
							p := float64(deq[(i2*m+i)*k+l]) * act((i2*n+j)*k+l)
							s += p
							mag += math.Abs(p)
						}
						g := float64(got.F32(int64(i), int64(j), int64(i2), 0))
						if math.Abs(g-s) > 1e-5*mag {
							t.Errorf("dst[%d, %d, %d] = %g, float64 %g", i, j, i2, g, s)
						}
					}
				}
			}
			// mul_mat_id with the two matrices as experts gives the same
			// columns as mul_mat of the chosen expert.
			as := ops.FromF32(wt, []int64{k, m, 2}, av)
			bb := ops.FromF32(ops.F32, []int64{k, 1, 2}, bv[:2*k])
			ids := ops.FromInts(ops.I32, []int64{1, 2}, []int64{1, 0})
			y := mustOp(t, ops.OpMulMatID, []*ops.Tensor{as, bb, ids}, nil)
			for tok := 0; tok < 2; tok++ {
				e := 1 - tok
				for i := 0; i < m; i++ {
					var s, mag float64
					for l := 0; l < k; l++ {
						p := float64(deq[(e*m+i)*k+l]) * act(tok*k+l)
						s += p
						mag += math.Abs(p)
					}
					g := float64(y.F32(int64(i), 0, int64(tok), 0))
					if math.Abs(g-s) > 1e-5*mag {
						t.Errorf("mul_mat_id dst[%d, 0, %d] = %g, float64 %g", i, tok, g, s)
					}
				}
			}
		})
	}
	wantOpError(t, ops.OpMulMat, []*ops.Tensor{ops.New(ops.I16, 4, 2), ops.New(ops.F32, 4, 1)}, nil, "a is i16, want a float or quantized type")
	_, err := runOp(ops.OpMulMat, []*ops.Tensor{ops.New(ops.IQ2_XXS, 256, 2), ops.New(ops.F32, 256, 1)}, nil)
	if err == nil || err.Error() != "no host math for type iq2_xxs" {
		t.Errorf("mul_mat on iq2_xxs: err = %v, want no host math for type iq2_xxs", err)
	}
}

package ops

import (
	"math"
	"testing"
)

// genericWeightTypes have no matmul kernel of their own.
var genericWeightTypes = []Type{BF16, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K, Q6_K, F64, Q1_0, Q2_0, TQ1_0, TQ2_0, MXFP4, NVFP4, IQ4_NL, IQ4_XS}

// mul_mat and mul_mat_id on weights of the generic path: the products of
// the dequantized weights (DequantizeRow, checked against ggml's own in
// TestCodecsMatchGGML) with the activations (rounded to bf16 for bf16
// weights), summed in float64 here.
func TestMulMatGenericTypes(t *testing.T) {
	const k, m, n = 512, 37, 5 // m spans three row tiles; n one group of four columns and one more
	av := randVals(21, k*m*2, -1, 1)
	bv := randVals(22, k*n*2, -1, 1)
	for _, wt := range genericWeightTypes {
		t.Run(wt.String(), func(t *testing.T) {
			a := FromF32(wt, []int64{k, m, 2}, av)
			b := FromF32(F32, []int64{k, n, 2}, bv)
			got := mustOp(t, OpMulMat, []*Tensor{a, b}, nil)
			deq := a.ToF32()
			act := func(i int) float64 {
				if wt == BF16 {
					return float64(BF16ToF32(F32ToBF16(bv[i])))
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
			as := FromF32(wt, []int64{k, m, 2}, av)
			bb := FromF32(F32, []int64{k, 1, 2}, bv[:2*k])
			ids := FromInts(I32, []int64{1, 2}, []int64{1, 0})
			y := mustOp(t, OpMulMatID, []*Tensor{as, bb, ids}, nil)
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
	wantOpError(t, OpMulMat, []*Tensor{New(I16, 4, 2), New(F32, 4, 1)}, nil, "a is i16, want a float or quantized type")
	_, err := mustInfo(t, OpMulMat).Compute([]*Tensor{New(IQ2_XXS, 256, 2), New(F32, 256, 1)}, Params{})
	if err == nil || err.Error() != "no host math for type iq2_xxs" {
		t.Errorf("mul_mat on iq2_xxs: err = %v, want no host math for type iq2_xxs", err)
	}
}

func mustInfo(t *testing.T, op Op) *OpInfo {
	t.Helper()
	info, ok := Lookup(string(op))
	if !ok {
		t.Fatalf("no op %s", op)
	}
	return info
}

// get_rows and cpy on the new types: rows come out as DequantizeRow gives
// them; a cpy to the type quantizes as QuantizeRow does.
func TestGetRowsCpyNewTypes(t *testing.T) {
	const k = 256
	v := randVals(31, 3*k, -2, 2)
	for _, typ := range genericWeightTypes {
		data := FromF32(typ, []int64{k, 3}, v)
		rows := FromInts(I32, []int64{2}, []int64{2, 0})
		got := mustOp(t, OpGetRows, []*Tensor{data, rows}, nil)
		want := make([]float32, k)
		for i, r := range []int{2, 0} {
			DequantizeRow(typ, data.RowBytes(int64(r), 0, 0), want)
			for j := 0; j < k; j++ {
				if g := got.F32(int64(j), int64(i), 0, 0); math.Float32bits(g) != math.Float32bits(want[j]) {
					t.Fatalf("%s: get_rows[%d, %d] = %g, want %g", typ, j, i, g, want[j])
				}
			}
		}
		src := FromF32(F32, []int64{k, 3}, v)
		c := mustOp(t, OpCpy, []*Tensor{src}, map[string]any{"type": typ.String()})
		wantQ := make([]byte, typ.RowSize(k))
		for r := int64(0); r < 3; r++ {
			QuantizeRow(typ, v[r*k:(r+1)*k], wantQ)
			if string(c.RowBytes(r, 0, 0)) != string(wantQ) {
				t.Fatalf("%s: cpy row %d differs from QuantizeRow", typ, r)
			}
		}
	}
}

package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// genericWeightTypes are the types MUL_MAT takes by its generic path (no
// matmul kernel of their own: mulmat's TestMulMatGenericTypes).
var genericWeightTypes = []ops.Type{ops.BF16, ops.Q4_1, ops.Q5_0, ops.Q5_1, ops.Q2_K, ops.Q3_K, ops.Q5_K, ops.Q6_K, ops.F64, ops.Q1_0, ops.Q2_0, ops.TQ1_0, ops.TQ2_0, ops.MXFP4, ops.NVFP4, ops.IQ4_NL, ops.IQ4_XS}

// get_rows and cpy on the new types: rows come out as DequantizeRow gives
// them; a cpy to the type quantizes as QuantizeRow does.
func TestGetRowsCpyNewTypes(t *testing.T) {
	const k = 256
	v := opstest.RandVals(31, 3*k, -2, 2)
	for _, typ := range genericWeightTypes {
		data := ops.FromF32(typ, []int64{k, 3}, v)
		rows := ops.FromInts(ops.I32, []int64{2}, []int64{2, 0})
		got := mustOp(t, ops.OpGetRows, []*ops.Tensor{data, rows}, nil)
		want := make([]float32, k)
		for i, r := range []int{2, 0} {
			ops.DequantizeRow(typ, data.RowBytes(int64(r), 0, 0), want)
			for j := 0; j < k; j++ {
				if g := got.F32(int64(j), int64(i), 0, 0); math.Float32bits(g) != math.Float32bits(want[j]) {
					t.Fatalf("%s: get_rows[%d, %d] = %g, want %g", typ, j, i, g, want[j])
				}
			}
		}
		src := ops.FromF32(ops.F32, []int64{k, 3}, v)
		c := mustOp(t, ops.OpCpy, []*ops.Tensor{src}, map[string]any{"type": typ.String()})
		wantQ := make([]byte, typ.RowSize(k))
		for r := int64(0); r < 3; r++ {
			ops.QuantizeRow(typ, v[r*k:(r+1)*k], wantQ)
			if string(c.RowBytes(r, 0, 0)) != string(wantQ) {
				t.Fatalf("%s: cpy row %d differs from QuantizeRow", typ, r)
			}
		}
	}
}

package mulmat

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestMulMatID(t *testing.T) {
	// f32 by hand: 2 experts of [k=2, m=2]; expert 0 is the identity,
	// expert 1 doubles and swaps. b [2, 1, 2]; ids [2 used, 2 tokens].
	as := ops.FromF32(ops.F32, []int64{2, 2, 2}, []float32{1, 0, 0, 1, 0, 2, 2, 0})
	b := ops.FromF32(ops.F32, []int64{2, 1, 2}, []float32{3, 4, 5, 6})
	ids := ops.FromInts(ops.I32, []int64{2, 2}, []int64{1, 0, 0, 0})
	y := mustOp(t, ops.OpMulMatID, []*ops.Tensor{as, b, ids}, nil)
	if y.Ne != [ops.MaxDims]int64{2, 2, 2, 1} {
		t.Fatalf("shape %s, want [2, 2, 2, 1]", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{8, 6, 3, 4, 5, 6, 5, 6}, 0)

	// Every weight type: each (e, t) column is bit-identical to mul_mat of
	// that expert with that activation row, and close to float64.
	const k, m, nAs, nUsed, nTok = 64, 20, 4, 3, 5
	av := opstest.RandVals(7, k*m*nAs, -1, 1)
	bv := opstest.RandVals(8, k*nUsed*nTok, -1, 1)
	idv := []int64{3, 0, 2, 1, 1, 1, 0, 2, 3, 2, 2, 2, 3, 0, 1}
	for _, wt := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0} {
		t.Run(wt.String(), func(t *testing.T) {
			as := ops.FromF32(wt, []int64{k, m, nAs}, av)
			for _, nb1 := range []int64{1, nUsed} {
				b := ops.FromF32(ops.F32, []int64{k, nb1, nTok}, bv[:k*nb1*nTok])
				got := mustOp(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.FromInts(ops.I32, []int64{nUsed, nTok}, idv)}, nil)
				deq := as.ToF32()
				for tok := int64(0); tok < nTok; tok++ {
					for e := int64(0); e < nUsed; e++ {
						id := idv[tok*nUsed+e]
						w, err := ops.View(as, []int64{k, m}, []uint64{as.Nb[1]}, uint64(id)*as.Nb[2])
						if err != nil {
							t.Fatal(err)
						}
						brow, err := ops.View(b, []int64{k, 1}, nil, uint64((e%nb1)*int64(b.Nb[1])+tok*int64(b.Nb[2])))
						if err != nil {
							t.Fatal(err)
						}
						ref := ops.New(ops.F32, m, 1)
						if err := host.MulMat(ref, w, brow); err != nil {
							t.Fatal(err)
						}
						rv := ref.ToF32()
						for i := int64(0); i < m; i++ {
							g := got.F32(i, e, tok, 0)
							if g != rv[i] {
								t.Fatalf("n_b %d: dst[%d, %d, %d] = %v, mul_mat gives %v", nb1, i, e, tok, g, rv[i])
							}
							var s float64
							for j := int64(0); j < k; j++ {
								s += float64(deq[(id*m+i)*k+j]) * float64(b.F32(j, e%nb1, tok, 0))
							}
							if math.Abs(float64(g)-s) > 0.05 {
								t.Fatalf("dst[%d, %d, %d] = %v, float64 %v", i, e, tok, g, s)
							}
						}
					}
				}
			}
		})
	}
	info, _ := ops.Lookup("mul_mat_id")
	if c := info.Cost(nil, []*ops.Tensor{ops.New(ops.F32, k, m, nAs), ops.New(ops.F32, k, 1, nTok), ops.New(ops.I32, nUsed, nTok)}, nil); c.Flops != 2*k*m*nUsed*nTok {
		t.Errorf("flops %d, want %d", c.Flops, 2*k*m*nUsed*nTok)
	}

	bad := ops.FromInts(ops.I32, []int64{2, 2}, []int64{0, 2, 0, 0})
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, b, bad}, nil, "ids[1, 0] = 2 is not an expert (want 0 to 1)")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, ops.New(ops.F32, 3, 1, 2), ids}, nil, "as.ne0 = 2 != b.ne0 = 3")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.New(ops.I32, 2, 3)}, nil, "ids.ne1 = 3 != b.ne2 = 2")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, ops.New(ops.F32, 2, 3, 2), ids}, nil, "ids.ne0 = 2 is not a multiple of b.ne1 = 3")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.New(ops.I64, 2, 2)}, nil, "ids is i64, want i32")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.New(ops.I32, 2, 2, 2)}, nil, "ids [2, 2, 2, 1] is not 2-D")
	wantOpError(t, ops.OpMulMatID, []*ops.Tensor{as, b}, nil, "2 sources, want 3")
}

// TestMulMatIDTypes: every float and quantized type plans (ggml builds
// them); one without a host codec has no host math.
func TestMulMatIDTypes(t *testing.T) {
	info, _ := ops.Lookup("mul_mat_id")
	ids := ops.FromInts(ops.I32, []int64{1, 2}, []int64{0, 1})
	for _, typ := range ops.Types {
		if typ.Integer() {
			continue
		}
		k := int64(typ.BlockSize())
		as := ops.New(typ, k, 4, 2)
		_, _, err := info.Shape([]*ops.Tensor{as, ops.New(ops.F32, k, 1, 2), ids}, ops.Params{})
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if !typ.HasCodec() {
			if _, err := runOp(ops.OpMulMatID, []*ops.Tensor{as, ops.New(ops.F32, k, 1, 2), ids}, nil); !errors.As(err, new(*ops.NoHostMathError)) {
				t.Errorf("%s has no codec: error %v, want a NoHostMathError", typ, err)
			}
		}
	}
}

// TestMulMatIDExpertColumns runs MUL_MAT_ID with experts used by one, two
// and three columns (the eight-row kernels' fused single-column, fused
// two-column and gathered-scales paths) and by none, with q8_0 and q4_0
// weights and scales of every kind: each (e, t) column is bit-identical to
// the scalar mul_mat of that expert with that activation row.
func TestMulMatIDExpertColumns(t *testing.T) {
	const k, m, nAs, nUsed, nTok = 96, 19, 5, 2, 3
	// Expert 0: one column, 1: two, 2: three, 3: none, 4: none.
	idv := []int64{0, 1, 2, 1, 2, 2}
	r := rand.New(rand.NewPCG(41, 42))
	for _, wt := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		t.Run(wt.String(), func(t *testing.T) {
			as := rawWeights(r, wt, k, m*nAs)
			for off := 0; off < len(as.Buf); off += wt.TypeSize() {
				if r.IntN(16) == 0 {
					specials := []uint16{0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e01, 0x0000}
					binary.LittleEndian.PutUint16(as.Buf[off:], specials[r.IntN(len(specials))])
				}
			}
			as.Ne[1], as.Ne[2] = m, nAs
			as.Nb[2] = as.Nb[1] * m
			as.Nb[3] = as.Nb[2] * nAs
			b := ops.FromF32(ops.F32, []int64{k, nUsed, nTok}, opstest.RandF32(r, k*nUsed*nTok))
			got := mustOp(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.FromInts(ops.I32, []int64{nUsed, nTok}, idv)}, nil)
			for tok := int64(0); tok < nTok; tok++ {
				for e := int64(0); e < nUsed; e++ {
					id := idv[tok*nUsed+e]
					w, err := ops.View(as, []int64{k, m}, []uint64{as.Nb[1]}, uint64(id)*as.Nb[2])
					if err != nil {
						t.Fatal(err)
					}
					brow, err := ops.View(b, []int64{k, 1}, nil, uint64(e*int64(b.Nb[1])+tok*int64(b.Nb[2])))
					if err != nil {
						t.Fatal(err)
					}
					ref := ops.New(ops.F32, m, 1)
					mulMatScalar(ref, w, brow)
					for i := int64(0); i < m; i++ {
						g, want := got.F32(i, e, tok, 0), ref.F32(i, 0, 0, 0)
						if math.IsNaN(float64(g)) && math.IsNaN(float64(want)) {
							continue
						}
						if math.Float32bits(g) != math.Float32bits(want) {
							t.Fatalf("dst[%d, %d, %d] = %v, scalar mul_mat gives %v", i, e, tok, g, want)
						}
					}
				}
			}
		})
	}
}

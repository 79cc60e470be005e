package ops

import (
	"math"
	"testing"
)

func TestHostAcc(t *testing.T) {
	// a [6, 4, 2]; b [3, 2, 2] added at element offset 1 of a view with
	// a's row and plane strides.
	av := randVals(15, 6*4*2, -1, 1)
	bv := randVals(16, 3*2*2, -1, 1)
	a := FromF32(F32, []int64{6, 4, 2}, av)
	b := FromF32(F32, []int64{3, 2, 2}, bv)
	want := append([]float32(nil), av...)
	for i2 := 0; i2 < 2; i2++ {
		for i1 := 0; i1 < 2; i1++ {
			for i0 := 0; i0 < 3; i0++ {
				j := 1 + i0 + i1*6 + i2*24
				want[j] = float32(float64(want[j]) + float64(bv[i0+i1*3+i2*6]))
			}
		}
	}
	got := mustOp(t, OpAcc, []*Tensor{a, b}, map[string]any{"offset": 4})
	checkClose(t, got.ToF32(), want, 1e-7)
	wantOpError(t, OpAcc, []*Tensor{a, b}, map[string]any{"offset": 4 * 46}, "past a's")
}

func TestHostAddID(t *testing.T) {
	av := randVals(17, 4*2*3, -1, 1) // a [4, 2 used, 3 tokens]
	bv := randVals(18, 4*5, -1, 1)   // b [4, 5 experts]
	ids := []int64{4, 0, 1, 1, 3, 2} // [2, 3]
	want := make([]float32, len(av))
	for tok := 0; tok < 3; tok++ {
		for u := 0; u < 2; u++ {
			e := ids[tok*2+u]
			for i := 0; i < 4; i++ {
				want[(tok*2+u)*4+i] = float32(float64(av[(tok*2+u)*4+i]) + float64(bv[int(e)*4+i]))
			}
		}
	}
	got := mustOp(t, OpAddID, []*Tensor{FromF32(F32, []int64{4, 2, 3}, av), FromF32(F32, []int64{4, 5}, bv), FromInts(I32, []int64{2, 3}, ids)}, nil)
	checkClose(t, got.ToF32(), want, 1e-7)
}

func TestHostArange(t *testing.T) {
	got := mustOp(t, OpArange, nil, map[string]any{"start": 1.5, "stop": 4.0, "step": 0.5})
	checkClose(t, got.ToF32(), []float32{1.5, 2, 2.5, 3, 3.5}, 0)
	wantOpError(t, OpArange, nil, map[string]any{"start": 2.0, "stop": 1.0}, "greater than start")
}

func TestHostTimestepEmbedding(t *testing.T) {
	ts := []float32{0, 3, 250.5}
	const dim, mp = 7, 10000
	got := mustOp(t, OpTimestepEmbedding, []*Tensor{FromF32(F32, []int64{3}, ts)}, map[string]any{"dim": dim, "max_period": mp})
	if got.Ne != [MaxDims]int64{dim, 3, 1, 1} {
		t.Fatalf("shape %v", got.Ne)
	}
	want := make([]float32, dim*3)
	for i, tv := range ts {
		for j := 0; j < dim/2; j++ {
			arg := float64(tv) * math.Exp(-math.Log(mp)*float64(j)/float64(dim/2))
			want[i*dim+j] = float32(math.Cos(arg))
			want[i*dim+j+dim/2] = float32(math.Sin(arg))
		}
	}
	checkClose(t, got.ToF32(), want, 1e-4)
}

func TestHostOutProd(t *testing.T) {
	const m, n, k = 5, 3, 4
	// a [m, k, 1, 2], b [n, k, 2, 2]: a broadcast over dim 2.
	av := randVals(19, m*k*2, -1, 1)
	bv := randVals(20, n*k*4, -1, 1)
	a := FromF32(F32, []int64{m, k, 1, 2}, av)
	b := FromF32(F32, []int64{n, k, 2, 2}, bv)
	want := make([]float32, m*n*4)
	for i3 := 0; i3 < 2; i3++ {
		for i2 := 0; i2 < 2; i2++ {
			for j := 0; j < n; j++ {
				for i := 0; i < m; i++ {
					var s float64
					for kk := 0; kk < k; kk++ {
						s += float64(av[(i3*k+kk)*m+i]) * float64(bv[((i3*2+i2)*k+kk)*n+j])
					}
					want[((i3*2+i2)*n+j)*m+i] = float32(s)
				}
			}
		}
	}
	got := mustOp(t, OpOutProd, []*Tensor{a, b}, nil)
	if got.Ne != [MaxDims]int64{m, n, 2, 2} {
		t.Fatalf("shape %v", got.Ne)
	}
	checkClose(t, got.ToF32(), want, 1e-6)
	// b as the transpose of a [k, n, ...] tensor gives the same result.
	bt := Transpose(Cont(Transpose(b)))
	checkClose(t, mustOp(t, OpOutProd, []*Tensor{a, bt}, nil).ToF32(), want, 1e-6)
}

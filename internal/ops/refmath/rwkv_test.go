package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// naiveWKV6 is rwkv_wkv6 in float64: S=head size, H heads, T tokens, n
// sequences. Inputs are flat arrays in ggml order.
func naiveWKV6(k, v, r, tf, td, state []float32, s, h, tok, n int) []float64 {
	c := s * h
	out := make([]float64, c*tok+s*s*h*n)
	per := tok / n
	for q := 0; q < n; q++ {
		for hh := 0; hh < h; hh++ {
			st := make([]float64, s*s)
			for i := range st {
				st[i] = float64(state[q*s*s*h+hh*s*s+i])
			}
			for t := q * per; t < (q+1)*per; t++ {
				for i := 0; i < s; i++ {
					ki := float64(k[t*c+hh*s+i])
					for j := 0; j < s; j++ {
						kv := float64(v[t*c+hh*s+j]) * ki
						out[t*c+hh*s+j] += (kv*float64(tf[hh*s+i]) + st[i*s+j]) * float64(r[t*c+hh*s+i])
						st[i*s+j] = st[i*s+j]*float64(td[t*c+hh*s+i]) + kv
					}
				}
			}
			copy(out[c*tok+q*s*s*h+hh*s*s:], st)
		}
	}
	return out
}

// naiveWKV7 is rwkv_wkv7 in float64.
func naiveWKV7(r, w, k, v, a, b, state []float32, s, h, tok, n int) []float64 {
	c := s * h
	out := make([]float64, c*tok+s*s*h*n)
	per := tok / n
	for q := 0; q < n; q++ {
		for hh := 0; hh < h; hh++ {
			st := make([]float64, s*s)
			for i := range st {
				st[i] = float64(state[q*s*s*h+hh*s*s+i])
			}
			for t := q * per; t < (q+1)*per; t++ {
				at := func(x []float32, j int) float64 { return float64(x[t*c+hh*s+j]) }
				for i := 0; i < s; i++ {
					var sa float64
					for j := 0; j < s; j++ {
						sa += at(a, j) * st[i*s+j]
					}
					var y float64
					for j := 0; j < s; j++ {
						st[i*s+j] = st[i*s+j]*at(w, j) + at(v, i)*at(k, j) + sa*at(b, j)
						y += st[i*s+j] * at(r, j)
					}
					out[t*c+hh*s+i] = y
				}
			}
			copy(out[c*tok+q*s*s*h+hh*s*s:], st)
		}
	}
	return out
}

func TestRWKV(t *testing.T) {
	const s, h, tok, n = 4, 3, 6, 2
	per := func(seed int64, lo, hi float32) []float32 { return opstest.RandVals(seed, s*h*tok, lo, hi) }
	state := opstest.RandVals(20, s*s*h*n, -1, 1)
	stT := ops.FromF32(ops.F32, []int64{s * s * h, n}, state)
	shape := []int64{s, h, tok}

	k, v, r, td := per(21, -1, 1), per(22, -1, 1), per(23, -1, 1), per(24, 0.5, 1)
	tf := opstest.RandVals(25, s*h, -1, 1)
	srcs6 := []*ops.Tensor{ops.FromF32(ops.F32, shape, k), ops.FromF32(ops.F32, shape, v), ops.FromF32(ops.F32, shape, r),
		ops.FromF32(ops.F32, []int64{s, h}, tf), ops.FromF32(ops.F32, shape, td), stT}
	y := mustOp(t, ops.OpRWKVWKV6, srcs6, nil)
	if y.Ne != [ops.MaxDims]int64{s * h, tok + s*n, 1, 1} {
		t.Fatalf("wkv6 shape %s, want [12, 14, 1, 1]", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), f32s(naiveWKV6(k, v, r, tf, td, state, s, h, tok, n)), 2e-6)

	rr, w, kk, vv, a, b := per(31, -1, 1), per(32, 0.5, 1), per(33, -1, 1), per(34, -1, 1), per(35, -0.2, 0.2), per(36, -0.2, 0.2)
	srcs7 := []*ops.Tensor{ops.FromF32(ops.F32, shape, rr), ops.FromF32(ops.F32, shape, w), ops.FromF32(ops.F32, shape, kk),
		ops.FromF32(ops.F32, shape, vv), ops.FromF32(ops.F32, shape, a), ops.FromF32(ops.F32, shape, b), stT}
	y = mustOp(t, ops.OpRWKVWKV7, srcs7, nil)
	if y.Ne != [ops.MaxDims]int64{s * h, tok + s*n, 1, 1} {
		t.Fatalf("wkv7 shape %s", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), f32s(naiveWKV7(rr, w, kk, vv, a, b, state, s, h, tok, n)), 2e-6)

	bad := append([]*ops.Tensor(nil), srcs6...)
	bad[1] = ops.New(ops.F32, s, h, tok-1)
	wantOpError(t, ops.OpRWKVWKV6, bad, nil, "v [4, 3, 5, 1], want [S, H, T] = [4, 3, 6, 1] like k")
	bad = append([]*ops.Tensor(nil), srcs6...)
	bad[3] = ops.New(ops.F32, s)
	wantOpError(t, ops.OpRWKVWKV6, bad, nil, "tf [4, 1, 1, 1] has 4 elements, want S·H = 12")
	bad = append([]*ops.Tensor(nil), srcs6...)
	bad[5] = ops.New(ops.F32, s*s*h, 4)
	wantOpError(t, ops.OpRWKVWKV6, bad, nil, "T = 6 tokens do not split evenly into n_seqs = 4 sequences")
	bad = append([]*ops.Tensor(nil), srcs7...)
	bad[6] = ops.New(ops.F32, s*s*h+1, n)
	wantOpError(t, ops.OpRWKVWKV7, bad, nil, "want S·S·H·n_seqs")
	bad = append([]*ops.Tensor(nil), srcs7...)
	bad[4] = ops.New(ops.F16, s, h, tok)
	wantOpError(t, ops.OpRWKVWKV7, bad, nil, "a is f16, want f32")
}

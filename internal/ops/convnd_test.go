package ops

import (
	"math"
	"testing"
)

func TestHostPool1D(t *testing.T) {
	xs := randVals(21, 10*2, -1, 1)
	x := FromF32(F32, []int64{10, 2}, xs)
	const k, s, p = 3, 2, 1
	ow := (10+2*p-k)/s + 1
	for _, op := range []string{"max", "avg"} {
		want := make([]float32, ow*2)
		for r := 0; r < 2; r++ {
			for o := 0; o < ow; o++ {
				var sum float64
				best := math.Inf(-1)
				cnt := 0
				for j := o*s - p; j < o*s-p+k; j++ {
					if j >= 0 && j < 10 {
						v := float64(xs[r*10+j])
						sum += v
						best = math.Max(best, v)
						cnt++
					}
				}
				if op == "max" {
					want[r*ow+o] = float32(best)
				} else {
					want[r*ow+o] = float32(sum / float64(cnt)) // pool_1d: in-bounds taps only
				}
			}
		}
		got := mustOp(t, OpPool1D, []*Tensor{x}, map[string]any{"op": op, "k0": k, "s0": s, "p0": p})
		checkClose(t, got.ToF32(), want, 1e-6)
	}
}

func TestHostPool2D(t *testing.T) {
	const w, h = 5, 4
	xs := randVals(22, w*h*2, -1, 1)
	x := FromF32(F32, []int64{w, h, 2}, xs)
	const k0, k1, s0, s1, p0, p1 = 3, 2, 2, 1, 1, 0
	ow, oh := (w+2*p0-k0)/s0+1, (h+2*p1-k1)/s1+1
	for _, op := range []string{"max", "avg"} {
		want := make([]float32, ow*oh*2)
		for c := 0; c < 2; c++ {
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					var sum float64
					best := math.Inf(-1)
					for ky := 0; ky < k1; ky++ {
						for kx := 0; kx < k0; kx++ {
							ix, iy := ox*s0-p0+kx, oy*s1-p1+ky
							if ix >= 0 && ix < w && iy >= 0 && iy < h {
								v := float64(xs[(c*h+iy)*w+ix])
								sum += v
								best = math.Max(best, v)
							}
						}
					}
					v := float32(best)
					if op == "avg" {
						v = float32(sum / (k0 * k1)) // pool_2d: always k0·k1
					}
					want[(c*oh+oy)*ow+ox] = v
				}
			}
		}
		got := mustOp(t, OpPool2D, []*Tensor{x}, map[string]any{"op": op, "k0": k0, "k1": k1, "s0": s0, "s1": s1, "p0": p0, "p1": p1})
		checkClose(t, got.ToF32(), want, 1e-6)
	}
}

func TestHostPadReflect1D(t *testing.T) {
	x := FromF32(F32, []int64{5, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	got := mustOp(t, OpPadReflect1D, []*Tensor{x}, map[string]any{"p0": 2, "p1": 3})
	want := []float32{3, 2, 1, 2, 3, 4, 5, 4, 3, 2, 8, 7, 6, 7, 8, 9, 10, 9, 8, 7}
	checkClose(t, got.ToF32(), want, 0)
	wantOpError(t, OpPadReflect1D, []*Tensor{x}, map[string]any{"p0": 5}, "p0")
}

func TestHostRoll(t *testing.T) {
	ne := []int64{4, 3, 2}
	xs := make([]float32, 24)
	for i := range xs {
		xs[i] = float32(i)
	}
	x := FromF32(F32, ne, xs)
	sh := []int64{1, -1, 1, 0}
	want := make([]float32, 24)
	for i2 := int64(0); i2 < 2; i2++ {
		for i1 := int64(0); i1 < 3; i1++ {
			for i0 := int64(0); i0 < 4; i0++ {
				// the element at i moves to i + shift (mod ne).
				d := ((i2+sh[2])%2*3+(i1+sh[1]+3)%3)*4 + (i0+sh[0])%4
				want[d] = xs[(i2*3+i1)*4+i0]
			}
		}
	}
	checkClose(t, mustOp(t, OpRoll, []*Tensor{x}, map[string]any{"shift": sh}).ToF32(), want, 0)
	wantOpError(t, OpRoll, []*Tensor{x}, map[string]any{"shift": []int64{4, 0, 0, 0}}, "shift")
}

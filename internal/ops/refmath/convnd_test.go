package refmath

import (
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestHostPool1D(t *testing.T) {
	xs := opstest.RandVals(21, 10*2, -1, 1)
	x := ops.FromF32(ops.F32, []int64{10, 2}, xs)
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
		got := mustOp(t, ops.OpPool1D, []*ops.Tensor{x}, map[string]any{"op": op, "k0": k, "s0": s, "p0": p})
		opstest.CheckClose(t, got.ToF32(), want, 1e-6)
	}
}

func TestHostPool2D(t *testing.T) {
	const w, h = 5, 4
	xs := opstest.RandVals(22, w*h*2, -1, 1)
	x := ops.FromF32(ops.F32, []int64{w, h, 2}, xs)
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
		got := mustOp(t, ops.OpPool2D, []*ops.Tensor{x}, map[string]any{"op": op, "k0": k0, "k1": k1, "s0": s0, "s1": s1, "p0": p0, "p1": p1})
		opstest.CheckClose(t, got.ToF32(), want, 1e-6)
	}
}

func TestHostPadReflect1D(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{5, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	got := mustOp(t, ops.OpPadReflect1D, []*ops.Tensor{x}, map[string]any{"p0": 2, "p1": 3})
	want := []float32{3, 2, 1, 2, 3, 4, 5, 4, 3, 2, 8, 7, 6, 7, 8, 9, 10, 9, 8, 7}
	opstest.CheckClose(t, got.ToF32(), want, 0)
	wantOpError(t, ops.OpPadReflect1D, []*ops.Tensor{x}, map[string]any{"p0": 5}, "p0")
}

func TestHostRoll(t *testing.T) {
	ne := []int64{4, 3, 2}
	xs := make([]float32, 24)
	for i := range xs {
		xs[i] = float32(i)
	}
	x := ops.FromF32(ops.F32, ne, xs)
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
	opstest.CheckClose(t, mustOp(t, ops.OpRoll, []*ops.Tensor{x}, map[string]any{"shift": sh}).ToF32(), want, 0)
	wantOpError(t, ops.OpRoll, []*ops.Tensor{x}, map[string]any{"shift": []int64{4, 0, 0, 0}}, "shift")
}

// upscale64 is an independent float64 resampler of one [w, h] plane with
// PyTorch's conventions (half-pixel centres, or align_corners; edge
// clamping; bicubic a = -0.75; antialiased bilinear as a normalised
// triangle filter of width max(1, 1/scale)).
func upscale64(src []float64, w, h, ow, oh int, mode string, align, aa bool) []float64 {
	sx, sy := float64(ow)/float64(w), float64(oh)/float64(h)
	off := 0.5
	if align {
		off = 0
		if ow > 1 && w > 1 {
			sx = float64(ow-1) / float64(w-1)
		}
		if oh > 1 && h > 1 {
			sy = float64(oh-1) / float64(h-1)
		}
	}
	at := func(x, y int) float64 {
		x = max(0, min(x, w-1))
		y = max(0, min(y, h-1))
		return src[y*w+x]
	}
	cub := func(t float64) float64 { // Keys kernel, a = -0.75
		const a = -0.75
		t = math.Abs(t)
		switch {
		case t <= 1:
			return (a+2)*t*t*t - (a+3)*t*t + 1
		case t < 2:
			return a*t*t*t - 5*a*t*t + 8*a*t - 4*a
		}
		return 0
	}
	out := make([]float64, ow*oh)
	for j := 0; j < oh; j++ {
		for i := 0; i < ow; i++ {
			var v float64
			switch {
			case mode == "nearest":
				v = at(int(float64(i)/sx), int(float64(j)/sy))
			case aa:
				cx, cy := (float64(i)+off)/sx, (float64(j)+off)/sy
				rx, ry := math.Max(1, 1/sx), math.Max(1, 1/sy)
				var tot float64
				for y := 0; y < h; y++ {
					wy := math.Max(0, 1-math.Abs((float64(y)+off-cy)/ry))
					for x := 0; x < w; x++ {
						wgt := wy * math.Max(0, 1-math.Abs((float64(x)+off-cx)/rx))
						v += wgt * src[y*w+x]
						tot += wgt
					}
				}
				v /= tot
			case mode == "bilinear":
				fx, fy := (float64(i)+off)/sx-off, (float64(j)+off)/sy-off
				x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
				dx := math.Max(0, math.Min(fx-float64(max(0, min(x0, w-1))), 1))
				dy := math.Max(0, math.Min(fy-float64(max(0, min(y0, h-1))), 1))
				v = at(x0, y0)*(1-dx)*(1-dy) + at(x0+1, y0)*dx*(1-dy) + at(x0, y0+1)*(1-dx)*dy + at(x0+1, y0+1)*dx*dy
			default:
				fx, fy := (float64(i)+off)/sx-off, (float64(j)+off)/sy-off
				x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
				for m := -1; m <= 2; m++ {
					for n := -1; n <= 2; n++ {
						v += cub(fx-float64(x0+n)) * cub(fy-float64(y0+m)) * at(x0+n, y0+m)
					}
				}
			}
			out[j*ow+i] = v
		}
	}
	return out
}

func TestHostUpscale(t *testing.T) {
	const w, h, c = 5, 4, 2
	xs := opstest.RandVals(23, w*h*c, -1, 1)
	x := ops.FromF32(ops.F32, []int64{w, h, c}, xs)
	for _, tt := range []struct {
		mode      string
		align, aa bool
		ow, oh    int
	}{
		{"nearest", false, false, 10, 8}, {"nearest", false, false, 3, 7},
		{"bilinear", false, false, 9, 6}, {"bilinear", true, false, 9, 6}, {"bilinear", false, false, 3, 2},
		{"bilinear", false, true, 2, 3}, {"bilinear", false, true, 11, 8},
		{"bicubic", false, false, 8, 9}, {"bicubic", true, false, 7, 3},
	} {
		raw := map[string]any{"ne": []int64{int64(tt.ow), int64(tt.oh), c, 1}, "mode": tt.mode, "align_corners": tt.align, "antialias": tt.aa}
		got := mustOp(t, ops.OpUpscale, []*ops.Tensor{x}, raw).ToF32()
		var want []float32
		for ch := 0; ch < c; ch++ {
			plane := make([]float64, w*h)
			for i := range plane {
				plane[i] = float64(xs[ch*w*h+i])
			}
			for _, v := range upscale64(plane, w, h, tt.ow, tt.oh, tt.mode, tt.align, tt.aa) {
				want = append(want, float32(v))
			}
		}
		t.Run(fmt.Sprintf("%s align=%v aa=%v %dx%d", tt.mode, tt.align, tt.aa, tt.ow, tt.oh), func(t *testing.T) {
			opstest.CheckClose(t, got, want, 1e-5)
		})
	}
	// An empty x has nothing to sample (FuzzCatalog found the index
	// panic: testdata/fuzz/FuzzCatalog/3729a4c0a31b81c4).
	wantOpError(t, ops.OpUpscale, []*ops.Tensor{ops.New(ops.F32, 0, h, c)}, map[string]any{"ne": []int64{2, 2, 1, 1}}, "no elements")
}

package refmath

import (
	"math"

	"github.com/ainekko/et/internal/ops"
)

// refPool1D is ggml_compute_forward_pool_1d_ksp: max starts at -FLT_MAX,
// avg divides by the number of in-bounds taps (0 if none).
func refPool1D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	isMax := p.Str("op") == "max"
	k, s, pad := p.Int("k0"), p.Int("s0"), p.Int("p0")
	row := make([]float32, x.Ne[0])
	out := make([]float32, dst.Ne[0])
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(x.Ne, r)
		x.Row(i1, i2, i3, row)
		for ow := range out {
			res := float32(0)
			if isMax {
				res = -math.MaxFloat32
			}
			count := 0
			base := int64(ow)*s - pad
			for ki := int64(0); ki < k; ki++ {
				j := base + ki
				if j < 0 || j >= x.Ne[0] {
					continue
				}
				if isMax {
					res = max32C(row[j], res)
				} else {
					res += row[j]
				}
				count++
			}
			if !isMax {
				if count > 0 {
					res /= float32(count)
				} else {
					res = 0
				}
			}
			out[ow] = res
		}
		dst.SetRow(i1, i2, i3, out)
	}
	return nil
}

// refPool2D is ggml_compute_forward_pool_2d: max starts at -FLT_MAX, avg
// divides by k0·k1 whatever the number of in-bounds taps.
func refPool2D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	isMax := p.Str("op") == "max"
	k0, k1, s0, s1, p0, p1 := p.Int("k0"), p.Int("k1"), p.Int("s0"), p.Int("s1"), p.Int("p0"), p.Int("p1")
	for i3 := int64(0); i3 < dst.Ne[3]; i3++ {
		for i2 := int64(0); i2 < dst.Ne[2]; i2++ {
			for oy := int64(0); oy < dst.Ne[1]; oy++ {
				for ox := int64(0); ox < dst.Ne[0]; ox++ {
					res := float32(0)
					if isMax {
						res = -math.MaxFloat32
					}
					ix, iy := ox*s0-p0, oy*s1-p1
					for ky := int64(0); ky < k1; ky++ {
						if iy+ky < 0 || iy+ky >= x.Ne[1] {
							continue
						}
						for kx := int64(0); kx < k0; kx++ {
							j := ix + kx
							if j < 0 || j >= x.Ne[0] {
								continue
							}
							v := x.F32(j, iy+ky, i2, i3)
							if isMax {
								res = max32C(v, res)
							} else {
								res += v
							}
						}
					}
					if !isMax {
						res /= float32(k0 * k1)
					}
					dst.SetF32(ox, oy, i2, i3, res)
				}
			}
		}
	}
	return nil
}

// refPadReflect1D: dst[p0 + i] = x[i]; dst[p0 - i] = x[i] and dst[p0 +
// ne0 - 1 + i] = x[ne0 - 1 - i] for i = 1..p0 (p1).
func refPadReflect1D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	p0, p1 := p.Int("p0"), p.Int("p1")
	n := x.Ne[0]
	row := make([]float32, n)
	out := make([]float32, dst.Ne[0])
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := ops.RowIndex(x.Ne, r)
		x.Row(i1, i2, i3, row)
		copy(out[p0:], row)
		for i := int64(1); i <= p0; i++ {
			out[p0-i] = row[i]
		}
		for i := int64(1); i <= p1; i++ {
			out[p0+n-1+i] = row[n-1-i]
		}
		dst.SetRow(i1, i2, i3, out)
	}
	return nil
}

// refRoll: dst[i] = x[(i - shift) mod ne] in every dim.
func refRoll(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	sh := p.Ints("shift")
	wrap := func(i, n int64) int64 { return ((i % n) + n) % n }
	dst.ForEach(func(i0, i1, i2, i3 int64) {
		dst.SetF32(i0, i1, i2, i3, x.F32(wrap(i0-sh[0], x.Ne[0]), wrap(i1-sh[1], x.Ne[1]), wrap(i2-sh[2], x.Ne[2]), wrap(i3-sh[3], x.Ne[3])))
	})
	return nil
}

// refUpscale is ggml_compute_forward_upscale_f32, in float32 as on the
// CPU. The scale factors are dst.ne / x.ne (align_corners: (ne - 1) /
// (x.ne - 1) in dims 0 and 1, with no half-pixel offset); dims 2 and 3
// are always nearest. nearest takes x[floor(i / sf)]; bilinear
// interpolates the 2x2 neighbours of ((i + 0.5) / sf - 0.5), clamped to
// the edge; bilinear with antialias averages the triangle filter over
// max(1, 1/sf) source pixels (PyTorch's antialias); bicubic is the
// a = -0.75 convolution of the 4x4 neighbours, clamped to the edge.
func refUpscale(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	x := srcs[0]
	ne, xn := dst.Ne, x.Ne
	sf := [ops.MaxDims]float32{}
	for d := range sf {
		sf[d] = float32(ne[d]) / float32(xn[d])
	}
	off := float32(0.5)
	if p.Bool("align_corners") {
		off = 0
		for d := 0; d < 2; d++ {
			if ne[d] > 1 && xn[d] > 1 {
				sf[d] = float32(ne[d]-1) / float32(xn[d]-1)
			}
		}
	}
	clampI := func(v, n int64) int64 { return max(0, min(v, n-1)) }
	clampF := func(v float32) float32 { return max(0, min(v, 1)) }
	mode := p.Str("mode")
	aa := p.Bool("antialias")
	const a = float32(-0.75)
	w1 := func(t float32) float32 { return ((a+2)*t-(a+3))*t*t + 1 }
	w2 := func(t float32) float32 { return ((a*t-5*a)*t+8*a)*t - 4*a }
	cubic := func(p0, p1, p2, p3, t float32) float32 {
		return p0*w2(t+1) + p1*w1(t) + p2*w1(1-t) + p3*w2(2-t)
	}
	tri := func(t float32) float32 { return max(1-float32(math.Abs(float64(t))), 0) }
	for i3 := int64(0); i3 < ne[3]; i3++ {
		i03 := int64(float32(i3) / sf[3])
		for i2 := int64(0); i2 < ne[2]; i2++ {
			i02 := int64(float32(i2) / sf[2])
			for i1 := int64(0); i1 < ne[1]; i1++ {
				for i0 := int64(0); i0 < ne[0]; i0++ {
					var v float32
					switch {
					case mode == "nearest":
						v = x.F32(int64(float32(i0)/sf[0]), int64(float32(i1)/sf[1]), i02, i03)
					case mode == "bilinear" && aa:
						s1, s0 := max(1, 1/sf[1]), max(1, 1/sf[0])
						inv1, inv0 := 1/s1, 1/s0
						yc := (float32(i1) + off) / sf[1]
						xc := (float32(i0) + off) / sf[0]
						xMin, xMax := max(int64(xc-s0+off), 0), min(int64(xc+s0+off), xn[0])
						yMin, yMax := max(int64(yc-s1+off), 0), min(int64(yc+s1+off), xn[1])
						var total float32
						for sy := yMin; sy < yMax; sy++ {
							wy := tri((float32(sy) - yc + off) * inv1)
							for sx := xMin; sx < xMax; sx++ {
								w := tri((float32(sx)-xc+off)*inv0) * wy
								if w <= 0 {
									continue
								}
								v += x.F32(sx, sy, i02, i03) * w
								total += w
							}
						}
						if total > 0 {
							v /= total
						}
					case mode == "bilinear":
						y := (float32(i1)+off)/sf[1] - off
						y0 := int64(math.Floor(float64(y)))
						y1 := clampI(y0+1, xn[1])
						y0 = clampI(y0, xn[1])
						dy := clampF(y - float32(y0))
						xx := (float32(i0)+off)/sf[0] - off
						x0 := int64(math.Floor(float64(xx)))
						x1 := clampI(x0+1, xn[0])
						x0 = clampI(x0, xn[0])
						dx := clampF(xx - float32(x0))
						pa, pb := x.F32(x0, y0, i02, i03), x.F32(x1, y0, i02, i03)
						pc, pd := x.F32(x0, y1, i02, i03), x.F32(x1, y1, i02, i03)
						v = pa*(1-dx)*(1-dy) + pb*dx*(1-dy) + pc*(1-dx)*dy + pd*dx*dy
					default: // bicubic
						y := (float32(i1)+off)/sf[1] - off
						y0 := int64(math.Floor(float64(y)))
						dy := y - float32(y0)
						xx := (float32(i0)+off)/sf[0] - off
						x0 := int64(math.Floor(float64(xx)))
						dx := xx - float32(x0)
						px := func(ox, oy int64) float32 {
							return x.F32(clampI(x0+ox, xn[0]), clampI(y0+oy, xn[1]), i02, i03)
						}
						var rows [4]float32
						for j := int64(0); j < 4; j++ {
							rows[j] = cubic(px(-1, j-1), px(0, j-1), px(1, j-1), px(2, j-1), dx)
						}
						v = cubic(rows[0], rows[1], rows[2], rows[3], dy)
					}
					dst.SetF32(i0, i1, i2, i3, v)
				}
			}
		}
	}
	return nil
}

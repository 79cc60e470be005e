package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// Reference math of the convolutions ggml-et does not implement, as
// ggml's CPU computes them (ggml-cpu/ops.cpp). Where the CPU converts the
// input to f16 for an f16 kernel (conv_transpose_1d/2d, conv_3d), so does
// et; dot products are accumulated in float64 and rounded to float32
// (the CPU's SIMD dots round differently in the last bits).

// inputF32 reads element (i0..i3) of x, rounded to f16 when half is set.
func inputF32(x *ops.Tensor, half bool, i0, i1, i2, i3 int64) float32 {
	v := x.F32(i0, i1, i2, i3)
	if half {
		return ops.RoundF16(v)
	}
	return v
}

// refConvTranspose1D: dst[t·s0 + k, oc] += Σ_ic input[t, ic]·kernel[k, oc, ic],
// for t and k in increasing order.
func refConvTranspose1D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, in := srcs[0], srcs[1]
	s0 := p.Int("s0")
	half := k.Type == ops.F16
	K, OC, IC, L := k.Ne[0], k.Ne[1], k.Ne[2], in.Ne[0]
	acc := make([]float32, dst.Ne[0])
	for oc := int64(0); oc < OC; oc++ {
		clear(acc)
		for t := int64(0); t < L; t++ {
			for kk := int64(0); kk < K; kk++ {
				var v float64
				for ic := int64(0); ic < IC; ic++ {
					v += float64(inputF32(in, half, t, ic, 0, 0)) * float64(k.F32(kk, oc, ic, 0))
				}
				acc[t*s0+kk] += float32(v)
			}
		}
		dst.SetRow(oc, 0, 0, acc)
	}
	return nil
}

// refConvTranspose2D: dst[x·s + kx, y·s + ky, oc, n] += Σ_ic input[x, y, ic, n]·kernel[kx, ky, oc, ic].
// ggml's CPU computes only the first batch (n = 0); et computes every
// batch the same way.
func refConvTranspose2D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, in := srcs[0], srcs[1]
	s := p.Int("stride")
	half := k.Type == ops.F16
	KW, KH, OC, IC := k.Ne[0], k.Ne[1], k.Ne[2], k.Ne[3]
	W, H := in.Ne[0], in.Ne[1]
	plane := make([]float32, dst.Ne[0]*dst.Ne[1])
	for n := int64(0); n < in.Ne[3]; n++ {
		for oc := int64(0); oc < OC; oc++ {
			clear(plane)
			for y := int64(0); y < H; y++ {
				for x := int64(0); x < W; x++ {
					for ky := int64(0); ky < KH; ky++ {
						for kx := int64(0); kx < KW; kx++ {
							var v float64
							for ic := int64(0); ic < IC; ic++ {
								v += float64(inputF32(in, half, x, y, ic, n)) * float64(k.F32(kx, ky, oc, ic))
							}
							plane[(y*s+ky)*dst.Ne[0]+x*s+kx] += float32(v)
						}
					}
				}
			}
			for oy := int64(0); oy < dst.Ne[1]; oy++ {
				dst.SetRow(oy, oc, n, plane[oy*dst.Ne[0]:(oy+1)*dst.Ne[0]])
			}
		}
	}
	return nil
}

// refConv2DDW is ggml_compute_forward_conv_2d_dw_whcn: per channel c,
// dst[x, y] = Σ_{ky, kx} kernel[kx, ky, 0, c]·input[x·s0 + kx·d0 - p0,
// y·s1 + ky·d1 - p1] over the in-bounds taps, in float32.
func refConv2DDW(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, in := srcs[0], srcs[1]
	s0, s1, p0, p1, d0, d1 := p.Int("s0"), p.Int("s1"), p.Int("p0"), p.Int("p1"), p.Int("d0"), p.Int("d1")
	for n := int64(0); n < dst.Ne[3]; n++ {
		for c := int64(0); c < dst.Ne[2]; c++ {
			for oy := int64(0); oy < dst.Ne[1]; oy++ {
				for ox := int64(0); ox < dst.Ne[0]; ox++ {
					var sum float32
					for ky := int64(0); ky < k.Ne[1]; ky++ {
						sy := oy*s1 + ky*d1 - p1
						if sy < 0 || sy >= in.Ne[1] {
							continue
						}
						for kx := int64(0); kx < k.Ne[0]; kx++ {
							sx := ox*s0 + kx*d0 - p0
							if sx < 0 || sx >= in.Ne[0] {
								continue
							}
							sum += k.F32(kx, ky, 0, c) * in.F32(sx, sy, c, n)
						}
					}
					dst.SetF32(ox, oy, c, n, sum)
				}
			}
		}
	}
	return nil
}

// refIm2col3D is ggml_compute_forward_im2col_3d: element ((ic·KD + kd)·KH
// + kh)·KW + kw of patch (ow, oh, n·OD + od) is input[ow·s0 + kw·d0 - p0,
// oh·s1 + kh·d1 - p1, od·s2 + kd·d2 - p2, n·IC + ic], 0 outside.
func refIm2col3D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, in := srcs[0], srcs[1]
	IC := p.Int("IC")
	s0, s1, s2 := p.Int("s0"), p.Int("s1"), p.Int("s2")
	p0, p1, p2 := p.Int("p0"), p.Int("p1"), p.Int("p2")
	d0, d1, d2 := p.Int("d0"), p.Int("d1"), p.Int("d2")
	KW, KH, KD := k.Ne[0], k.Ne[1], k.Ne[2]
	N := in.Ne[3] / IC
	if N == 0 {
		return nil
	}
	OD := dst.Ne[3] / N
	row := make([]float32, dst.Ne[0])
	for n := int64(0); n < N; n++ {
		for od := int64(0); od < OD; od++ {
			for oh := int64(0); oh < dst.Ne[2]; oh++ {
				for ow := int64(0); ow < dst.Ne[1]; ow++ {
					for ic := int64(0); ic < IC; ic++ {
						for kd := int64(0); kd < KD; kd++ {
							for kh := int64(0); kh < KH; kh++ {
								for kw := int64(0); kw < KW; kw++ {
									iw, ih, id := ow*s0+kw*d0-p0, oh*s1+kh*d1-p1, od*s2+kd*d2-p2
									var v float32
									if iw >= 0 && iw < in.Ne[0] && ih >= 0 && ih < in.Ne[1] && id >= 0 && id < in.Ne[2] {
										v = in.F32(iw, ih, id, n*IC+ic)
									}
									row[((ic*KD+kd)*KH+kh)*KW+kw] = v
								}
							}
						}
					}
					dst.SetRow(ow, oh, n*OD+od, row)
				}
			}
		}
	}
	return nil
}

// refConv3D is ggml's conv_3d (im2col, then a product with the kernel):
// dst[ow, oh, od, n·OC + oc] = Σ_{ic, kd, kh, kw} kernel[kw, kh, kd, oc·IC + ic]·input[...,
// n·IC + ic] over the in-bounds taps.
func refConv3D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	k, in := srcs[0], srcs[1]
	IC, N, OC := p.Int("IC"), p.Int("N"), p.Int("OC")
	s0, s1, s2 := p.Int("s0"), p.Int("s1"), p.Int("s2")
	p0, p1, p2 := p.Int("p0"), p.Int("p1"), p.Int("p2")
	d0, d1, d2 := p.Int("d0"), p.Int("d1"), p.Int("d2")
	KW, KH, KD := k.Ne[0], k.Ne[1], k.Ne[2]
	half := k.Type == ops.F16
	// The kernel as float32, [KW·KH·KD·IC, OC].
	kn := KW * KH * KD * IC
	kf := make([]float32, kn*OC)
	for oc := int64(0); oc < OC; oc++ {
		for ic := int64(0); ic < IC; ic++ {
			for kd := int64(0); kd < KD; kd++ {
				for kh := int64(0); kh < KH; kh++ {
					for kw := int64(0); kw < KW; kw++ {
						kf[oc*kn+((ic*KD+kd)*KH+kh)*KW+kw] = k.F32(kw, kh, kd, oc*IC+ic)
					}
				}
			}
		}
	}
	OW, OH, OD := dst.Ne[0], dst.Ne[1], dst.Ne[2]
	cpu.RefParallel(N*OD*OH, OW*kn*OC, func(lo, hi int64) {
		patch := make([]float32, kn)
		for r := lo; r < hi; r++ {
			oh, od, n := r%OH, (r/OH)%OD, r/(OH*OD)
			for ow := int64(0); ow < OW; ow++ {
				for ic := int64(0); ic < IC; ic++ {
					for kd := int64(0); kd < KD; kd++ {
						for kh := int64(0); kh < KH; kh++ {
							for kw := int64(0); kw < KW; kw++ {
								iw, ih, id := ow*s0+kw*d0-p0, oh*s1+kh*d1-p1, od*s2+kd*d2-p2
								var v float32
								if iw >= 0 && iw < in.Ne[0] && ih >= 0 && ih < in.Ne[1] && id >= 0 && id < in.Ne[2] {
									v = inputF32(in, half, iw, ih, id, n*IC+ic)
								}
								patch[((ic*KD+kd)*KH+kh)*KW+kw] = v
							}
						}
					}
				}
				for oc := int64(0); oc < OC; oc++ {
					var sum float64
					for i, v := range patch {
						sum += float64(v) * float64(kf[oc*kn+int64(i)])
					}
					dst.SetF32(ow, oh, od, n*OC+oc, float32(sum))
				}
			}
		}
	})
	return nil
}

// refCol2im1D is ggml_compute_forward_col2im_1d: dst[t, oc] = Σ over
// t_in with k = t + p0 - t_in·s0 in [0, K) of cols[oc·K + k, t_in], in
// float32, t_in increasing.
func refCol2im1D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	cols := srcs[0]
	s0, OC, p0 := p.Int("s0"), p.Int("oc"), p.Int("p0")
	K := cols.Ne[0] / OC
	for oc := int64(0); oc < OC; oc++ {
		for t := int64(0); t < dst.Ne[0]; t++ {
			abs := t + p0
			var sum float32
			for tin := max(int64(0), (abs-K+s0)/s0); tin <= min(abs/s0, cols.Ne[1]-1); tin++ {
				if kk := abs - tin*s0; kk >= 0 && kk < K {
					sum += cols.F32(oc*K+kk, tin, 0, 0)
				}
			}
			dst.SetF32(t, oc, 0, 0, sum)
		}
	}
	return nil
}

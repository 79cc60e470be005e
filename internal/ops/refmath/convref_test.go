package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

func TestHostConvTranspose1D(t *testing.T) {
	const K, OC, IC, L, s = 3, 2, 4, 5, 2
	kv := opstest.RandVals(30, K*OC*IC, -1, 1)
	iv := opstest.RandVals(31, L*IC, -1, 1)
	OL := (L-1)*s + K
	want := make([]float64, OL*OC)
	// Scatter form: every input sample spreads the kernel over the output.
	for ti := 0; ti < L; ti++ {
		for ic := 0; ic < IC; ic++ {
			for k := 0; k < K; k++ {
				for oc := 0; oc < OC; oc++ {
					want[oc*OL+ti*s+k] += float64(iv[ic*L+ti]) * float64(kv[(ic*OC+oc)*K+k])
				}
			}
		}
	}
	got := mustOp(t, ops.OpConvTranspose1D, []*ops.Tensor{ops.FromF32(ops.F32, []int64{K, OC, IC}, kv), ops.FromF32(ops.F32, []int64{L, IC}, iv)}, map[string]any{"s0": s})
	opstest.CheckClose(t, got.ToF32(), f32s(want), 1e-5)
	// An empty input has no output length ((0 - 1)·s0 + K < 0).
	wantOpError(t, ops.OpConvTranspose1D, []*ops.Tensor{ops.New(ops.F32, 1, OC, IC), ops.New(ops.F32, 0, IC)}, map[string]any{"s0": 4}, "length 0")
}

func TestHostConvTranspose2D(t *testing.T) {
	const KW, KH, OC, IC, W, H, s = 2, 3, 2, 3, 4, 3, 2
	kv := opstest.RandVals(32, KW*KH*OC*IC, -1, 1)
	iv := opstest.RandVals(33, W*H*IC, -1, 1)
	for _, kt := range []ops.Type{ops.F32, ops.F16} {
		k := ops.FromF32(kt, []int64{KW, KH, OC, IC}, kv)
		kf := k.ToF32()
		in := append([]float32(nil), iv...)
		if kt == ops.F16 { // the CPU rounds the input to f16 for an f16 kernel
			for i := range in {
				in[i] = ops.RoundF16(in[i])
			}
		}
		OW, OH := (W-1)*s+KW, (H-1)*s+KH
		want := make([]float64, OW*OH*OC)
		for ic := 0; ic < IC; ic++ {
			for y := 0; y < H; y++ {
				for x := 0; x < W; x++ {
					for oc := 0; oc < OC; oc++ {
						for ky := 0; ky < KH; ky++ {
							for kx := 0; kx < KW; kx++ {
								want[(oc*OH+y*s+ky)*OW+x*s+kx] += float64(in[(ic*H+y)*W+x]) * float64(kf[((ic*OC+oc)*KH+ky)*KW+kx])
							}
						}
					}
				}
			}
		}
		got := mustOp(t, ops.OpConvTranspose2D, []*ops.Tensor{k, ops.FromF32(ops.F32, []int64{W, H, IC}, iv)}, map[string]any{"stride": s})
		opstest.CheckClose(t, got.ToF32(), f32s(want), 1e-5)
	}
	// An empty input made a negative shape (FuzzCatalog found New's
	// panic: testdata/fuzz/FuzzCatalog/3a0b1b8c0d2200e3).
	wantOpError(t, ops.OpConvTranspose2D, []*ops.Tensor{ops.New(ops.F32, 1, 1, 2, 3), ops.New(ops.F32, 0, 2, 3)}, map[string]any{"stride": 4}, "width or height 0")
}

func TestHostConv2DDW(t *testing.T) {
	const KW, KH, C, W, H = 3, 2, 3, 6, 5
	kv := opstest.RandVals(34, KW*KH*C, -1, 1)
	iv := opstest.RandVals(35, W*H*C*2, -1, 1)
	const s0, s1, p0, p1, d0, d1 = 2, 1, 1, 0, 1, 2
	OW, OH := (W+2*p0-d0*(KW-1)-1)/s0+1, (H+2*p1-d1*(KH-1)-1)/s1+1
	want := make([]float64, OW*OH*C*2)
	for n := 0; n < 2; n++ {
		for c := 0; c < C; c++ {
			for oy := 0; oy < OH; oy++ {
				for ox := 0; ox < OW; ox++ {
					var sum float64
					for ky := 0; ky < KH; ky++ {
						for kx := 0; kx < KW; kx++ {
							x, y := ox*s0+kx*d0-p0, oy*s1+ky*d1-p1
							if x >= 0 && x < W && y >= 0 && y < H {
								sum += float64(kv[(c*KH+ky)*KW+kx]) * float64(iv[((n*C+c)*H+y)*W+x])
							}
						}
					}
					want[((n*C+c)*OH+oy)*OW+ox] = sum
				}
			}
		}
	}
	raw := map[string]any{"s0": s0, "s1": s1, "p0": p0, "p1": p1, "d0": d0, "d1": d1}
	got := mustOp(t, ops.OpConv2DDW, []*ops.Tensor{ops.FromF32(ops.F32, []int64{KW, KH, 1, C}, kv), ops.FromF32(ops.F32, []int64{W, H, C, 2}, iv)}, raw)
	opstest.CheckClose(t, got.ToF32(), f32s(want), 1e-5)
}

// conv3d64 is a direct float64 3-D convolution: input [W, H, D, IC·N],
// kernel [KW, KH, KD, IC·OC] -> [OW, OH, OD, OC·N].
func conv3d64(in, ker []float32, W, H, D, IC, N, KW, KH, KD, OC int, s, pd, dl [3]int) ([]float64, [3]int) {
	o := [3]int{}
	for i, pair := range [][2]int{{W, KW}, {H, KH}, {D, KD}} {
		o[i] = (pair[0]+2*pd[i]-dl[i]*(pair[1]-1)-1)/s[i] + 1
	}
	out := make([]float64, o[0]*o[1]*o[2]*OC*N)
	for n := 0; n < N; n++ {
		for oc := 0; oc < OC; oc++ {
			for z := 0; z < o[2]; z++ {
				for y := 0; y < o[1]; y++ {
					for x := 0; x < o[0]; x++ {
						var sum float64
						for ic := 0; ic < IC; ic++ {
							for kz := 0; kz < KD; kz++ {
								for ky := 0; ky < KH; ky++ {
									for kx := 0; kx < KW; kx++ {
										ix, iy, iz := x*s[0]+kx*dl[0]-pd[0], y*s[1]+ky*dl[1]-pd[1], z*s[2]+kz*dl[2]-pd[2]
										if ix < 0 || ix >= W || iy < 0 || iy >= H || iz < 0 || iz >= D {
											continue
										}
										sum += float64(in[(((n*IC+ic)*D+iz)*H+iy)*W+ix]) * float64(ker[(((oc*IC+ic)*KD+kz)*KH+ky)*KW+kx])
									}
								}
							}
						}
						out[(((n*OC+oc)*o[2]+z)*o[1]+y)*o[0]+x] = sum
					}
				}
			}
		}
	}
	return out, o
}

func TestHostConv3DAndIm2col3D(t *testing.T) {
	const W, H, D, IC, N, KW, KH, KD, OC = 6, 5, 4, 2, 2, 3, 2, 2, 3
	s, pd, dl := [3]int{2, 1, 1}, [3]int{1, 0, 1}, [3]int{1, 2, 1}
	iv := opstest.RandVals(36, W*H*D*IC*N, -1, 1)
	kv := opstest.RandVals(37, KW*KH*KD*IC*OC, -1, 1)
	want, o := conv3d64(iv, kv, W, H, D, IC, N, KW, KH, KD, OC, s, pd, dl)
	raw := map[string]any{"IC": IC, "N": N, "OC": OC, "s0": s[0], "s1": s[1], "s2": s[2], "p0": pd[0], "p1": pd[1], "p2": pd[2], "d0": dl[0], "d1": dl[1], "d2": dl[2]}
	in := ops.FromF32(ops.F32, []int64{W, H, D, IC * N}, iv)
	ker := ops.FromF32(ops.F32, []int64{KW, KH, KD, IC * OC}, kv)
	got := mustOp(t, ops.OpConv3D, []*ops.Tensor{ker, in}, raw)
	if got.Ne != [ops.MaxDims]int64{int64(o[0]), int64(o[1]), int64(o[2]), OC * N} {
		t.Fatalf("conv_3d shape %v, want %v", got.Ne, o)
	}
	opstest.CheckClose(t, got.ToF32(), f32s(want), 1e-5)

	// im2col_3d's patches times the kernel (as [KW·KH·KD·IC, OC]) are the
	// same convolution.
	delete(raw, "N")
	delete(raw, "OC")
	cols := mustOp(t, ops.OpIm2col3D, []*ops.Tensor{ker, in}, raw).ToF32()
	kn := KW * KH * KD * IC
	np := o[0] * o[1] * o[2] * N
	if len(cols) != kn*np {
		t.Fatalf("im2col_3d has %d values, want %d", len(cols), kn*np)
	}
	for n := 0; n < N; n++ {
		for z := 0; z < o[2]; z++ {
			for y := 0; y < o[1]; y++ {
				for x := 0; x < o[0]; x++ {
					patch := cols[(((n*o[2]+z)*o[1]+y)*o[0]+x)*kn:][:kn]
					for oc := 0; oc < OC; oc++ {
						var sum float64
						for i, v := range patch {
							sum += float64(v) * float64(kv[oc*kn+i])
						}
						w := want[(((n*OC+oc)*o[2]+z)*o[1]+y)*o[0]+x]
						if d := sum - w; d > 1e-5 || d < -1e-5 {
							t.Fatalf("im2col_3d patch (%d,%d,%d,%d)·kernel %d = %g, want %g", x, y, z, n, oc, sum, w)
						}
					}
				}
			}
		}
	}
}

func TestHostCol2im1D(t *testing.T) {
	const K, OC, T, s, p = 4, 2, 5, 2, 1
	cv := opstest.RandVals(38, K*OC*T, -1, 1)
	TO := (T-1)*s + K - 2*p
	want := make([]float64, TO*OC)
	// Scatter form: column t_in adds its K values at t_in·s + k - p.
	for ti := 0; ti < T; ti++ {
		for oc := 0; oc < OC; oc++ {
			for k := 0; k < K; k++ {
				if o := ti*s + k - p; o >= 0 && o < TO {
					want[oc*TO+o] += float64(cv[ti*K*OC+oc*K+k])
				}
			}
		}
	}
	got := mustOp(t, ops.OpCol2im1D, []*ops.Tensor{ops.FromF32(ops.F32, []int64{K * OC, T}, cv)}, map[string]any{"s0": s, "oc": OC, "p0": p})
	opstest.CheckClose(t, got.ToF32(), f32s(want), 1e-6)
}

// TestHostFlops: conv_3d and lightning_indexer count flops as
// test-backend-ops' op_flops does; out_prod, like every op without an
// op_flops, counts none (it is reported as bandwidth).
func TestHostFlops(t *testing.T) {
	conv, _ := ops.Lookup(string(ops.OpConv3D))
	p, _ := conv.Normalize(map[string]any{"IC": 2, "N": 1, "OC": 3})
	k, in := ops.New(ops.F32, 3, 3, 3, 6), ops.New(ops.F32, 8, 8, 8, 2)
	dst := ops.New(ops.F32, 6, 6, 6, 3)
	if got, want := conv.Cost(dst, []*ops.Tensor{k, in}, p).Flops, int64(1*3*6*6*6*(2*2*27-1)); got != want {
		t.Errorf("conv_3d flops = %d, want %d", got, want)
	}
	li, _ := ops.Lookup(string(ops.OpLightningIndexer))
	q, kk := ops.New(ops.F32, 128, 32, 4, 1), ops.New(ops.F16, 128, 1, 256, 1)
	if got, want := li.Cost(nil, []*ops.Tensor{q, kk, ops.New(ops.F32, 32, 4, 1, 1), ops.New(ops.F16, 256, 4, 1, 1)}, nil).Flops, int64(((2*128+2)*32+1)*256*4*1); got != want {
		t.Errorf("lightning_indexer flops = %d, want %d", got, want)
	}
	op, _ := ops.Lookup(string(ops.OpOutProd))
	if got := op.Cost(ops.New(ops.F32, 4, 4), []*ops.Tensor{ops.New(ops.F32, 4, 2), ops.New(ops.F32, 4, 2)}, nil).Flops; got != 0 {
		t.Errorf("out_prod flops = %d, want 0", got)
	}
}

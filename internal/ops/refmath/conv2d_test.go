package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestConv2D(t *testing.T) {
	// One channel in and out, 2x2 kernel of ones: sums of 2x2 windows.
	img := ops.FromF32(ops.F32, []int64{3, 3, 1, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	ones := ops.FromF32(ops.F32, []int64{2, 2, 1, 1}, []float32{1, 1, 1, 1})
	y := mustOp(t, ops.OpConv2D, []*ops.Tensor{ones, img}, nil)
	if y.Ne != [ops.MaxDims]int64{2, 2, 1, 1} {
		t.Fatalf("shape %s, want [2, 2, 1, 1]", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{12, 16, 24, 28}, 0)

	// Random multi-channel, batched, strided, padded, dilated: against a
	// float64 direct convolution.
	const kw, kh, ic, oc = 3, 2, 4, 5
	in := ops.FromF32(ops.F32, []int64{9, 7, ic, 2}, opstest.RandVals(5, 9*7*ic*2, -1, 1))
	kv := opstest.RandVals(6, kw*kh*ic*oc, -1, 1)
	raw := map[string]any{"s0": 2, "s1": 1, "p0": 1, "p1": 1, "d0": 1, "d1": 2}
	for _, kt := range []ops.Type{ops.F32, ops.F16} {
		t.Run(kt.String(), func(t *testing.T) {
			kernel := ops.FromF32(kt, []int64{kw, kh, ic, oc}, kv)
			got := mustOp(t, ops.OpConv2D, []*ops.Tensor{kernel, in}, raw)
			want := naiveConv2D(kernel, in, 2, 1, 1, 1, 1, 2, kt == ops.F16)
			if got.Ne != [ops.MaxDims]int64{5, 7, oc, 2} {
				t.Fatalf("shape %s, want [5, 7, 5, 2]", got.ShapeString())
			}
			opstest.CheckClose(t, got.ToF32(), want, 2e-6)
			// Strided kernel and input (test_conv_2d's cwhn layout): the same values.
			gs := mustOp(t, ops.OpConv2D, []*ops.Tensor{reftest.PermutedCopy(t, kernel), reftest.PermutedCopy(t, in)}, raw)
			opstest.CheckClose(t, gs.ToF32(), want, 2e-6)
		})
	}
	info, _ := ops.Lookup("conv_2d")
	p, _ := info.Normalize(raw)
	if c := info.Cost(nil, []*ops.Tensor{ops.FromF32(ops.F32, []int64{kw, kh, ic, oc}, kv), in}, p); c.Flops != 2*kw*kh*ic*oc*5*7*2 {
		t.Errorf("flops %d, want %d", c.Flops, 2*kw*kh*ic*oc*5*7*2)
	}
	wantOpError(t, ops.OpConv2D, []*ops.Tensor{ops.New(ops.F32, 2, 2, 3, 1), img}, nil, "kernel.ne2 = 3 != input.ne2 = 1")
	wantOpError(t, ops.OpConv2D, []*ops.Tensor{ops.New(ops.Q8_0, 32, 1, 1, 1), img}, nil, "kernel is q8_0, want f32 or f16")
	wantOpError(t, ops.OpConv2D, []*ops.Tensor{ops.New(ops.F32, 4, 4, 1, 1), img}, nil, "too small for kernel")
}

// naiveConv2D is a float64 direct convolution; f16 rounds the input taps to
// f16 first, as the CPU's f16 patches do.
func naiveConv2D(kernel, in *ops.Tensor, s0, s1, p0, p1, d0, d1 int64, f16 bool) []float32 {
	kw, kh, ic, oc := kernel.Ne[0], kernel.Ne[1], kernel.Ne[2], kernel.Ne[3]
	ow := (in.Ne[0]+2*p0-d0*(kw-1)-1)/s0 + 1
	oh := (in.Ne[1]+2*p1-d1*(kh-1)-1)/s1 + 1
	var out []float32
	for b := int64(0); b < in.Ne[3]; b++ {
		for o := int64(0); o < oc; o++ {
			for y := int64(0); y < oh; y++ {
				for x := int64(0); x < ow; x++ {
					var s float64
					for c := int64(0); c < ic; c++ {
						for ky := int64(0); ky < kh; ky++ {
							for kx := int64(0); kx < kw; kx++ {
								sx, sy := x*s0+kx*d0-p0, y*s1+ky*d1-p1
								if sx < 0 || sx >= in.Ne[0] || sy < 0 || sy >= in.Ne[1] {
									continue
								}
								v := in.F32(sx, sy, c, b)
								if f16 {
									v = ops.RoundF16(v)
								}
								s += float64(kernel.F32(kx, ky, c, o)) * float64(v)
							}
						}
					}
					out = append(out, float32(s))
				}
			}
		}
	}
	return out
}

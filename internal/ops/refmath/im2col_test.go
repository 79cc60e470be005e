package refmath

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestIm2col(t *testing.T) {
	// 3x3 single-channel image, 2x2 kernel, stride 1, no padding: four
	// patches, each [kx=0..1, ky=0..1] in ky·KW + kx order.
	img := ops.FromF32(ops.F32, []int64{3, 3, 1, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	kernel := ops.New(ops.F16, 2, 2, 1, 1)
	y := mustOp(t, ops.OpIm2col, []*ops.Tensor{kernel, img}, nil)
	if y.Ne != [ops.MaxDims]int64{4, 2, 2, 1} || y.Type != ops.F32 {
		t.Fatalf("%s %s, want f32 [4, 2, 2, 1]", y.Type, y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9}, 0)

	// Padding 1, stride 2: output 2x2; out-of-image taps are 0.
	y = mustOp(t, ops.OpIm2col, []*ops.Tensor{kernel, img}, map[string]any{"s0": 2, "s1": 2, "p0": 1, "p1": 1})
	opstest.CheckClose(t, y.ToF32(), []float32{0, 0, 0, 1, 0, 0, 2, 3, 0, 4, 0, 7, 5, 6, 8, 9}, 0)

	// 1-D, two channels, dilation 2: data [IW=5, IC=2, N=1], kernel [KW=2, IC=2].
	d1 := ops.FromF32(ops.F32, []int64{5, 2}, []float32{1, 2, 3, 4, 5, 10, 20, 30, 40, 50})
	k1 := ops.New(ops.F32, 2, 2)
	y = mustOp(t, ops.OpIm2col, []*ops.Tensor{k1, d1}, map[string]any{"is_2d": false, "d0": 2})
	if y.Ne != [ops.MaxDims]int64{4, 3, 1, 1} {
		t.Fatalf("1-D shape %s, want [4, 3, 1, 1]", y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{1, 3, 10, 30, 2, 4, 20, 40, 3, 5, 30, 50}, 0)
	// 1-D with s1 = p1 = d1 = 0, as test-backend-ops writes it: the same.
	y = mustOp(t, ops.OpIm2col, []*ops.Tensor{k1, d1}, map[string]any{"is_2d": false, "d0": 2, "s1": 0, "p1": 0, "d1": 0})
	opstest.CheckClose(t, y.ToF32(), []float32{1, 3, 10, 30, 2, 4, 20, 40, 3, 5, 30, 50}, 0)

	// A random multi-channel case against a float64 reference, f32 and f16
	// results, contiguous and strided data.
	data := ops.FromF32(ops.F32, []int64{7, 6, 3, 2}, opstest.RandVals(4, 7*6*3*2, -1, 1))
	kr := ops.New(ops.F32, 3, 2, 3, 4)
	raw := map[string]any{"s0": 2, "s1": 1, "p0": 1, "p1": 0, "d0": 1, "d1": 2}
	want := naiveIm2col(data, 3, 2, 2, 1, 1, 0, 1, 2)
	opstest.CheckClose(t, mustOp(t, ops.OpIm2col, []*ops.Tensor{kr, data}, raw).ToF32(), want, 0)
	opstest.CheckClose(t, mustOp(t, ops.OpIm2col, []*ops.Tensor{kr, reftest.PermutedCopy(t, data)}, raw).ToF32(), want, 0)
	raw["dst_type"] = "f16"
	h := mustOp(t, ops.OpIm2col, []*ops.Tensor{kr, data}, raw)
	wantH := make([]float32, len(want))
	for i, v := range want {
		wantH[i] = ops.RoundF16(v)
	}
	if h.Type != ops.F16 {
		t.Fatalf("type %s, want f16", h.Type)
	}
	opstest.CheckClose(t, h.ToF32(), wantH, 0)

	wantOpError(t, ops.OpIm2col, []*ops.Tensor{ops.New(ops.F32, 2, 2, 2), img}, nil, "kernel.ne2 = 2 != data.ne2 = 1")
	wantOpError(t, ops.OpIm2col, []*ops.Tensor{ops.New(ops.F32, 5, 5), img}, nil, "data [3, 3, 1, 1] is too small for kernel")
	wantOpError(t, ops.OpIm2col, []*ops.Tensor{kernel, img}, map[string]any{"s0": 0}, "param s0: 0, want >= 1")
	wantOpError(t, ops.OpIm2col, []*ops.Tensor{kernel, ops.FromF32(ops.F16, []int64{3, 3}, make([]float32, 9))}, nil, "data is f16, want f32")
	wantOpError(t, ops.OpIm2col, []*ops.Tensor{kernel, img}, map[string]any{"dst_type": "q8_0"}, "param dst_type: q8_0, want f32 or f16")
}

// naiveIm2col is the 2-D im2col of data for a KWxKH kernel, straight from
// the definition.
func naiveIm2col(data *ops.Tensor, kw, kh, s0, s1, p0, p1, d0, d1 int64) []float32 {
	iw, ih, ic, n := data.Ne[0], data.Ne[1], data.Ne[2], data.Ne[3]
	ow := (iw+2*p0-d0*(kw-1)-1)/s0 + 1
	oh := (ih+2*p1-d1*(kh-1)-1)/s1 + 1
	var out []float32
	for b := int64(0); b < n; b++ {
		for y := int64(0); y < oh; y++ {
			for x := int64(0); x < ow; x++ {
				for c := int64(0); c < ic; c++ {
					for ky := int64(0); ky < kh; ky++ {
						for kx := int64(0); kx < kw; kx++ {
							sx, sy := x*s0+kx*d0-p0, y*s1+ky*d1-p1
							v := float32(0)
							if sx >= 0 && sx < iw && sy >= 0 && sy < ih {
								v = data.F32(sx, sy, c, b)
							}
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	return out
}

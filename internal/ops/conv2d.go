package ops

import (
	"encoding/binary"
	"math"
)

// conv_2d: GGML_OP_CONV_2D (ggml_conv_2d_direct), a 2-D convolution
// without materialising im2col in the graph:
//
//	kernel [KW, KH, IC, OC] (f32 or f16), input [W, H, IC, N] f32 (either strided)
//	-> dst [OW, OH, OC, N] f32,  OW = (W + 2·p0 - d0·(KW-1) - 1)/s0 + 1
//	dst[ow, oh, oc, n] = Σ_{ic,ky,kx} kernel[kx, ky, ic, oc] ·
//	                     input[ow·s0 + kx·d0 - p0, oh·s1 + ky·d1 - p1, ic, n]
//
// computed as the CPU does: the patches (im2col rows, in the kernel's
// type, so an f16 kernel rounds the input patches to f16) times the kernel
// reshaped to [KW·KH·IC, OC], through MulMat.

func inferConv2D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	kernel, in := srcs[0], srcs[1]
	var zero [MaxDims]int64
	g, err := convParams(OpConv2D, p)
	if err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpConv2D, "kernel", kernel.Type, F32, F16); err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpConv2D, "input", in.Type, F32); err != nil {
		return 0, zero, err
	}
	if kernel.Ne[2] != in.Ne[2] {
		return 0, zero, shapeErr(OpConv2D, "kernel.ne2 = %d != input.ne2 = %d (input channels)", kernel.Ne[2], in.Ne[2])
	}
	ow := ConvOutputSize(in.Ne[0], kernel.Ne[0], g.s0, g.p0, g.d0)
	oh := ConvOutputSize(in.Ne[1], kernel.Ne[1], g.s1, g.p1, g.d1)
	if ow <= 0 || oh <= 0 {
		return 0, zero, shapeErr(OpConv2D, "input %s is too small for kernel %s (output %dx%d)", in.ShapeString(), kernel.ShapeString(), ow, oh)
	}
	return F32, [MaxDims]int64{ow, oh, kernel.Ne[3], in.Ne[3]}, nil
}

func refConv2D(dst *Tensor, srcs []*Tensor, p Params) error {
	kernel, in := srcs[0], srcs[1]
	g, err := convParams(OpConv2D, p)
	if err != nil {
		return err
	}
	kw, kh, ic, oc := kernel.Ne[0], kernel.Ne[1], kernel.Ne[2], kernel.Ne[3]
	ow, oh, n := dst.Ne[0], dst.Ne[1], dst.Ne[3]
	k := kw * kh * ic
	npatch := ow * oh * n
	if k == 0 || npatch == 0 || oc == 0 {
		return nil
	}
	if !kernel.IsContiguous() {
		// ggml's CPU asserts a contiguous kernel (its supports_op refuses
		// others); the math is the same on a contiguous copy.
		kernel = Cont(kernel)
	}
	patches := New(kernel.Type, k, npatch)
	refParallel(npatch, k, func(lo, hi int64) {
		row := make([]float32, k)
		for pi := lo; pi < hi; pi++ {
			x0, y0, b := pi%ow, (pi/ow)%oh, pi/(ow*oh)
			for c := int64(0); c < ic; c++ {
				for ky := int64(0); ky < kh; ky++ {
					y := y0*g.s1 + ky*g.d1 - g.p1
					for kx := int64(0); kx < kw; kx++ {
						x := x0*g.s0 + kx*g.d0 - g.p0
						v := float32(0)
						if x >= 0 && x < in.Ne[0] && y >= 0 && y < in.Ne[1] {
							v = in.F32(x, y, c, b)
						}
						row[c*kh*kw+ky*kw+kx] = v
					}
				}
			}
			patches.SetRow(pi, 0, 0, row)
		}
	})
	w, err := Reshape(kernel, k, oc)
	if err != nil {
		return shapeErr(OpConv2D, "%v", err)
	}
	out := New(F32, oc, npatch)
	if err := MulMat(out, w, patches); err != nil {
		return shapeErr(OpConv2D, "%v", err)
	}
	refParallel(npatch, oc, func(lo, hi int64) {
		for pi := lo; pi < hi; pi++ {
			x0, y0, b := pi%ow, (pi/ow)%oh, pi/(ow*oh)
			for c := int64(0); c < oc; c++ {
				v := math.Float32frombits(binary.LittleEndian.Uint32(out.Buf[out.ElemOffset(c, pi, 0, 0):]))
				dst.SetF32(x0, y0, c, b, v)
			}
		}
	})
	return nil
}

// flopsConv2D counts 2·KW·KH·IC multiply-adds per output element.
func flopsConv2D(_ *Tensor, srcs []*Tensor, p Params) int64 {
	_, ne, err := inferConv2D(srcs, p)
	if err != nil {
		return 0
	}
	kernel := srcs[0]
	return 2 * kernel.Ne[0] * kernel.Ne[1] * kernel.Ne[2] * ne[0] * ne[1] * ne[2] * ne[3]
}

package refmath

import (
	"encoding/binary"
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

func (ks *Kernels) refConv2D(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	kernel, in := srcs[0], srcs[1]
	g, err := ops.ConvParams(ops.OpConv2D, p)
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
		kernel = ops.Cont(kernel)
	}
	patches := ops.New(kernel.Type, k, npatch)
	cpu.RefParallel(npatch, k, func(lo, hi int64) {
		row := make([]float32, k)
		for pi := lo; pi < hi; pi++ {
			x0, y0, b := pi%ow, (pi/ow)%oh, pi/(ow*oh)
			for c := int64(0); c < ic; c++ {
				for ky := int64(0); ky < kh; ky++ {
					y := y0*g.S1 + ky*g.D1 - g.P1
					for kx := int64(0); kx < kw; kx++ {
						x := x0*g.S0 + kx*g.D0 - g.P0
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
	w, err := ops.Reshape(kernel, k, oc)
	if err != nil {
		return ops.ShapeErr(ops.OpConv2D, "%v", err)
	}
	out := ops.New(ops.F32, oc, npatch)
	if err := mm(ks).MulMat(out, w, patches); err != nil {
		return ops.ShapeErr(ops.OpConv2D, "%v", err)
	}
	cpu.RefParallel(npatch, oc, func(lo, hi int64) {
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

package ops

import "fmt"

// im2col: the patches of data that a convolution with kernel's shape
// visits, one patch per output position (ggml_im2col(a = kernel, b = data);
// the kernel only supplies its shape).
//
//	2-D (is_2d): kernel [KW, KH, IC, OC], data [IW, IH, IC, N]
//	             -> dst [IC·KH·KW, OW, OH, N]
//	1-D:         kernel [KW, IC, OC],     data [IW, IC, N]
//	             -> dst [IC·KW, OW, N]
//
// OW = (IW + 2·p0 - d0·(KW-1) - 1)/s0 + 1 and OH likewise with s1, p1, d1.
// Within a patch the index is ic·KH·KW + ky·KW + kx; input position
// (ow·s0 + kx·d0 - p0, oh·s1 + ky·d1 - p1), zero outside the input. dst is
// f32 (data f32) or f16 (data f16 or f32, rounded to f16).

// ConvOutputSize is ggml_calc_conv_output_size: (in + 2p - d(k-1) - 1)/s + 1.
func ConvOutputSize(in, k, s, p, d int64) int64 { return (in+2*p-d*(k-1)-1)/s + 1 }

type convGeom struct {
	s0, s1, p0, p1, d0, d1 int64
}

func convParams(op Op, p Params) (convGeom, error) {
	g := convGeom{p.Int("s0"), p.Int("s1"), p.Int("p0"), p.Int("p1"), p.Int("d0"), p.Int("d1")}
	// 1-D im2col (is_2d false) never reads s1, p1 and d1: test-backend-ops
	// passes 0 for them.
	oneD := op == OpIm2col && p.Has("is_2d") && !p.Bool("is_2d")
	for _, c := range []struct {
		name string
		v    int64
		min  int64
	}{{"s0", g.s0, 1}, {"s1", g.s1, 1}, {"p0", g.p0, 0}, {"p1", g.p1, 0}, {"d0", g.d0, 1}, {"d1", g.d1, 1}} {
		if oneD && c.name[1] == '1' {
			continue
		}
		if c.v < c.min {
			return g, &ParamError{Op: op, Param: c.name, Msg: fmt.Sprintf("%d, want >= %d", c.v, c.min)}
		}
	}
	return g, nil
}

func inferIm2col(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	kernel, data := srcs[0], srcs[1]
	var zero [MaxDims]int64
	g, err := convParams(OpIm2col, p)
	if err != nil {
		return 0, zero, err
	}
	dt := p.Type("dst_type")
	switch dt {
	case F32:
		if err := wantTypes(OpIm2col, "data", data.Type, F32); err != nil {
			return 0, zero, err
		}
	case F16:
		if err := wantTypes(OpIm2col, "data", data.Type, F32, F16); err != nil {
			return 0, zero, err
		}
	default:
		return 0, zero, &ParamError{Op: OpIm2col, Param: "dst_type", Msg: fmt.Sprintf("%s, want f32 or f16", dt)}
	}
	ow := ConvOutputSize(data.Ne[0], kernel.Ne[0], g.s0, g.p0, g.d0)
	if p.Bool("is_2d") {
		if kernel.Ne[2] != data.Ne[2] {
			return 0, zero, shapeErr(OpIm2col, "kernel.ne2 = %d != data.ne2 = %d (input channels)", kernel.Ne[2], data.Ne[2])
		}
		oh := ConvOutputSize(data.Ne[1], kernel.Ne[1], g.s1, g.p1, g.d1)
		if ow <= 0 || oh <= 0 {
			return 0, zero, shapeErr(OpIm2col, "data %s is too small for kernel %s (output %dx%d)", data.ShapeString(), kernel.ShapeString(), ow, oh)
		}
		return dt, [MaxDims]int64{kernel.Ne[0] * kernel.Ne[1] * kernel.Ne[2], ow, oh, data.Ne[3]}, nil
	}
	if kernel.Ne[1] != data.Ne[1] {
		return 0, zero, shapeErr(OpIm2col, "kernel.ne1 = %d != data.ne1 = %d (input channels, 1-D)", kernel.Ne[1], data.Ne[1])
	}
	if data.Ne[3] != 1 {
		return 0, zero, shapeErr(OpIm2col, "data %s has ne3 = %d, want 1 for 1-D im2col", data.ShapeString(), data.Ne[3])
	}
	if ow <= 0 {
		return 0, zero, shapeErr(OpIm2col, "data %s is too small for kernel %s (output width %d)", data.ShapeString(), kernel.ShapeString(), ow)
	}
	return dt, [MaxDims]int64{kernel.Ne[0] * kernel.Ne[1], ow, data.Ne[2], 1}, nil
}

func refIm2col(dst *Tensor, srcs []*Tensor, p Params) error {
	kernel, data := srcs[0], srcs[1]
	g, err := convParams(OpIm2col, p)
	if err != nil {
		return err
	}
	is2d := p.Bool("is_2d")
	kw := kernel.Ne[0]
	kh, ic := int64(1), kernel.Ne[1]
	iw, ih := data.Ne[0], int64(1)
	if is2d {
		kh, ic = kernel.Ne[1], kernel.Ne[2]
		ih = data.Ne[1]
	}
	n0 := dst.Ne[0]
	refParallel(dst.NRows(), n0, func(lo, hi int64) {
		row := make([]float32, n0)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndex(dst.Ne, r)
			ow, oh, n := i1, i2, i3
			if !is2d {
				oh, n = 0, i2
			}
			for c := int64(0); c < ic; c++ {
				for ky := int64(0); ky < kh; ky++ {
					y := oh*g.s1 + ky*g.d1 - g.p1
					for kx := int64(0); kx < kw; kx++ {
						x := ow*g.s0 + kx*g.d0 - g.p0
						v := float32(0)
						if x >= 0 && x < iw && y >= 0 && y < ih {
							if is2d {
								v = data.F32(x, y, c, n)
							} else {
								v = data.F32(x, c, n, 0)
							}
						}
						row[c*kh*kw+ky*kw+kx] = v
					}
				}
			}
			dst.SetRow(i1, i2, i3, row)
		}
	})
	return nil
}

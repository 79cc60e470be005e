package ops

import (
	"fmt"
	"math"
)

// The convolution, pooling and resampling ops ggml-et does not implement:
// shapes from their ggml.c constructors, math (where et has it) from
// ggml's CPU (ggml-cpu/ops.cpp).

// convOut is ggml_calc_conv_output_size.
func convOut(ins, ks, s, p, d int64) int64 { return (ins+2*p-d*(ks-1)-1)/s + 1 }

func positive(op Op, p Params, names ...string) error {
	for _, n := range names {
		if p.Int(n) <= 0 {
			return &ParamError{Op: op, Param: n, Msg: fmt.Sprintf("must be positive, got %d", p.Int(n))}
		}
	}
	return nil
}

func inferConvTranspose1D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	k, in := srcs[0], srcs[1]
	if err := positive(OpConvTranspose1D, p, "s0"); err != nil {
		return 0, k.Ne, err
	}
	if p.Int("p0") != 0 || p.Int("d0") != 1 {
		return 0, k.Ne, &ParamError{Op: OpConvTranspose1D, Param: "p0", Msg: "ggml_conv_transpose_1d needs p0 = 0 and d0 = 1"}
	}
	if err := wantTypes(OpConvTranspose1D, "kernel", k.Type, F32, F16); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpConvTranspose1D, "input", in.Type, F32); err != nil {
		return 0, k.Ne, err
	}
	if in.Ne[2] != 1 || in.Ne[3] != 1 || k.Ne[2] != in.Ne[1] || k.Ne[3] != 1 {
		return 0, k.Ne, shapeErr(OpConvTranspose1D, "kernel %s, input %s: want kernel [K, OC, IC, 1], input [L, IC] (a matrix)", k.ShapeString(), in.ShapeString())
	}
	return F32, [MaxDims]int64{(in.Ne[0]-1)*p.Int("s0") + k.Ne[0], k.Ne[1], in.Ne[2], 1}, nil
}

func inferConvTranspose2D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	k, in := srcs[0], srcs[1]
	if err := positive(OpConvTranspose2D, p, "stride"); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpConvTranspose2D, "kernel", k.Type, F32, F16); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpConvTranspose2D, "input", in.Type, F32); err != nil {
		return 0, k.Ne, err
	}
	if k.Ne[3] != in.Ne[2] {
		return 0, k.Ne, shapeErr(OpConvTranspose2D, "kernel.ne3 = %d != input.ne2 = %d (input channels)", k.Ne[3], in.Ne[2])
	}
	s := p.Int("stride")
	return F32, [MaxDims]int64{(in.Ne[0]-1)*s + k.Ne[0], (in.Ne[1]-1)*s + k.Ne[1], k.Ne[2], in.Ne[3]}, nil
}

func inferConv2DDW(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	k, in := srcs[0], srcs[1]
	if err := positive(OpConv2DDW, p, "s0", "s1", "d0", "d1"); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpConv2DDW, "kernel", k.Type, F32, F16); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpConv2DDW, "input", in.Type, F32); err != nil {
		return 0, k.Ne, err
	}
	if k.Ne[2] != 1 || k.Ne[3] != in.Ne[2] {
		return 0, k.Ne, shapeErr(OpConv2DDW, "kernel %s, input %s: want kernel [KW, KH, 1, C] for input [W, H, C, N]", k.ShapeString(), in.ShapeString())
	}
	ow := convOut(in.Ne[0], k.Ne[0], p.Int("s0"), p.Int("p0"), p.Int("d0"))
	oh := convOut(in.Ne[1], k.Ne[1], p.Int("s1"), p.Int("p1"), p.Int("d1"))
	if ow <= 0 || oh <= 0 {
		return 0, k.Ne, shapeErr(OpConv2DDW, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
	}
	return in.Type, [MaxDims]int64{ow, oh, in.Ne[2], in.Ne[3]}, nil
}

func inferIm2col3D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	k, in := srcs[0], srcs[1]
	if err := positive(OpIm2col3D, p, "s0", "s1", "s2", "d0", "d1", "d2", "IC"); err != nil {
		return 0, k.Ne, err
	}
	if err := wantTypes(OpIm2col3D, "dst_type", p.Type("dst_type"), F32, F16); err != nil {
		return 0, k.Ne, err
	}
	// N = input.ne3 / IC as ggml computes it: an input.ne3 below IC (or
	// not a multiple of it) gives what ggml gives, N = floor(ne3 / IC).
	IC := p.Int("IC")
	n := in.Ne[3] / IC
	od := convOut(in.Ne[2], k.Ne[2], p.Int("s2"), p.Int("p2"), p.Int("d2"))
	oh := convOut(in.Ne[1], k.Ne[1], p.Int("s1"), p.Int("p1"), p.Int("d1"))
	ow := convOut(in.Ne[0], k.Ne[0], p.Int("s0"), p.Int("p0"), p.Int("d0"))
	if od <= 0 || oh <= 0 || ow <= 0 {
		return 0, k.Ne, shapeErr(OpIm2col3D, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
	}
	return p.Type("dst_type"), [MaxDims]int64{k.Ne[0] * k.Ne[1] * k.Ne[2] * IC, ow, oh, od * n}, nil
}

func inferCol2im1D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a := srcs[0]
	if err := wantTypes(OpCol2im1D, "cols", a.Type, F32, F16); err != nil {
		return 0, a.Ne, err
	}
	if err := positive(OpCol2im1D, p, "s0", "oc"); err != nil {
		return 0, a.Ne, err
	}
	if a.Ne[2] != 1 || a.Ne[3] != 1 {
		return 0, a.Ne, shapeErr(OpCol2im1D, "cols %s is not a matrix", a.ShapeString())
	}
	s0, oc, p0 := p.Int("s0"), p.Int("oc"), p.Int("p0")
	if p0 < 0 {
		return 0, a.Ne, &ParamError{Op: OpCol2im1D, Param: "p0", Msg: "must not be negative"}
	}
	K := a.Ne[0] / oc
	tOut := (a.Ne[1]-1)*s0 + K - 2*p0
	if K*oc != a.Ne[0] || K <= 0 || tOut <= 0 {
		return 0, a.Ne, shapeErr(OpCol2im1D, "cols %s with oc = %d, s0 = %d, p0 = %d: ne0 must be K·oc and the output length positive", a.ShapeString(), oc, s0, p0)
	}
	return a.Type, [MaxDims]int64{tOut, oc, 1, 1}, nil
}

func inferConv3D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	k, in := srcs[0], srcs[1]
	if err := positive(OpConv3D, p, "s0", "s1", "s2", "d0", "d1", "d2", "IC", "N", "OC"); err != nil {
		return 0, k.Ne, err
	}
	c, n, oc := p.Int("IC"), p.Int("N"), p.Int("OC")
	if k.Ne[3] != c*oc || in.Ne[3] != c*n {
		return 0, k.Ne, shapeErr(OpConv3D, "kernel.ne3 = %d, input.ne3 = %d: want IC·OC = %d and IC·N = %d", k.Ne[3], in.Ne[3], c*oc, c*n)
	}
	ow := convOut(in.Ne[0], k.Ne[0], p.Int("s0"), p.Int("p0"), p.Int("d0"))
	oh := convOut(in.Ne[1], k.Ne[1], p.Int("s1"), p.Int("p1"), p.Int("d1"))
	od := convOut(in.Ne[2], k.Ne[2], p.Int("s2"), p.Int("p2"), p.Int("d2"))
	if ow <= 0 || oh <= 0 || od <= 0 {
		return 0, k.Ne, shapeErr(OpConv3D, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
	}
	return F32, [MaxDims]int64{ow, oh, od, oc * n}, nil
}

// poolOut is ggml_calc_pool_output_size (p is a float in ggml; et's
// integer padding gives the same value).
func poolOut(ins, k, s, p int64) int64 { return (ins+2*p-k)/s + 1 }

func inferPool1D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpPool1D, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if err := positive(OpPool1D, p, "k0", "s0"); err != nil {
		return 0, x.Ne, err
	}
	ow := poolOut(x.Ne[0], p.Int("k0"), p.Int("s0"), p.Int("p0"))
	if ow <= 0 {
		return 0, x.Ne, shapeErr(OpPool1D, "no output: ne0 = %d with k0 = %d, p0 = %d", x.Ne[0], p.Int("k0"), p.Int("p0"))
	}
	return F32, [MaxDims]int64{ow, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
}

// refPool1D is ggml_compute_forward_pool_1d_ksp: max starts at -FLT_MAX,
// avg divides by the number of in-bounds taps (0 if none).
func refPool1D(dst *Tensor, srcs []*Tensor, p Params) error {
	x := srcs[0]
	isMax := p.Str("op") == "max"
	k, s, pad := p.Int("k0"), p.Int("s0"), p.Int("p0")
	row := make([]float32, x.Ne[0])
	out := make([]float32, dst.Ne[0])
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := rowIndex(x.Ne, r)
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

func inferPool2D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpPool2D, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if err := positive(OpPool2D, p, "k0", "k1", "s0", "s1"); err != nil {
		return 0, x.Ne, err
	}
	ow := poolOut(x.Ne[0], p.Int("k0"), p.Int("s0"), p.Int("p0"))
	oh := poolOut(x.Ne[1], p.Int("k1"), p.Int("s1"), p.Int("p1"))
	if ow <= 0 || oh <= 0 {
		return 0, x.Ne, shapeErr(OpPool2D, "no output for x %s with these k, s, p", x.ShapeString())
	}
	return F32, [MaxDims]int64{ow, oh, x.Ne[2], x.Ne[3]}, nil
}

// refPool2D is ggml_compute_forward_pool_2d: max starts at -FLT_MAX, avg
// divides by k0·k1 whatever the number of in-bounds taps.
func refPool2D(dst *Tensor, srcs []*Tensor, p Params) error {
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

func inferUpscale(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpUpscale, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if p.Bool("antialias") && p.Str("mode") != "bilinear" {
		return 0, x.Ne, &ParamError{Op: OpUpscale, Param: "antialias", Msg: "needs mode bilinear"}
	}
	var ne [MaxDims]int64
	copy(ne[:], p.Ints("ne"))
	for d, n := range ne {
		if n <= 0 {
			return 0, x.Ne, &ParamError{Op: OpUpscale, Param: "ne", Msg: fmt.Sprintf("ne%d = %d, want a positive size", d, n)}
		}
	}
	return F32, ne, nil
}

func inferPadReflect1D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpPadReflect1D, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	p0, p1 := p.Int("p0"), p.Int("p1")
	if p0 < 0 || p1 < 0 || p0 >= x.Ne[0] || p1 >= x.Ne[0] {
		return 0, x.Ne, &ParamError{Op: OpPadReflect1D, Param: "p0", Msg: fmt.Sprintf("p0 = %d, p1 = %d: each must be in [0, ne0 = %d)", p0, p1, x.Ne[0])}
	}
	return F32, [MaxDims]int64{x.Ne[0] + p0 + p1, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
}

// refPadReflect1D: dst[p0 + i] = x[i]; dst[p0 - i] = x[i] and dst[p0 +
// ne0 - 1 + i] = x[ne0 - 1 - i] for i = 1..p0 (p1).
func refPadReflect1D(dst *Tensor, srcs []*Tensor, p Params) error {
	x := srcs[0]
	p0, p1 := p.Int("p0"), p.Int("p1")
	n := x.Ne[0]
	row := make([]float32, n)
	out := make([]float32, dst.Ne[0])
	for r := int64(0); r < x.NRows(); r++ {
		i1, i2, i3 := rowIndex(x.Ne, r)
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

func inferRoll(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpRoll, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Nb[0] != uint64(x.Type.TypeSize()) {
		return 0, x.Ne, shapeErr(OpRoll, "x.nb0 = %d, want the element size %d", x.Nb[0], x.Type.TypeSize())
	}
	for d, s := range p.Ints("shift") {
		if s <= -x.Ne[d] || s >= x.Ne[d] {
			return 0, x.Ne, &ParamError{Op: OpRoll, Param: "shift", Msg: fmt.Sprintf("|shift%d| = %d must be less than ne%d = %d", d, s, d, x.Ne[d])}
		}
	}
	return F32, x.Ne, nil
}

// refRoll: dst[i] = x[(i - shift) mod ne] in every dim.
func refRoll(dst *Tensor, srcs []*Tensor, p Params) error {
	x := srcs[0]
	sh := p.Ints("shift")
	wrap := func(i, n int64) int64 { return ((i % n) + n) % n }
	dst.forEach(func(i0, i1, i2, i3 int64) {
		dst.SetF32(i0, i1, i2, i3, x.F32(wrap(i0-sh[0], x.Ne[0]), wrap(i1-sh[1], x.Ne[1]), wrap(i2-sh[2], x.Ne[2]), wrap(i3-sh[3], x.Ne[3])))
	})
	return nil
}

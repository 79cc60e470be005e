package ops

import (
	"fmt"
)

// --- conv2d (its math: refmath/conv2d.go) ---
// conv_2d: GGML_OP_CONV_2D (ggml_conv_2d_direct), a 2-D convolution
// without materialising im2col in the graph:
//
// 	kernel [KW, KH, IC, OC] (f32 or f16), input [W, H, IC, N] f32 (either strided)
// 	-> dst [OW, OH, OC, N] f32,  OW = (W + 2·p0 - d0·(KW-1) - 1)/s0 + 1
// 	dst[ow, oh, oc, n] = Σ_{ic,ky,kx} kernel[kx, ky, ic, oc] ·
// 	                     input[ow·s0 + kx·d0 - p0, oh·s1 + ky·d1 - p1, ic, n]
//
// computed as the CPU does: the patches (im2col rows, in the kernel's
// type, so an f16 kernel rounds the input patches to f16) times the kernel
// reshaped to [KW·KH·IC, OC], through MulMat.

func inferConv2D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	kernel, in := srcs[0], srcs[1]
	var zero [MaxDims]int64
	g, err := ConvParams(OpConv2D, p)
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
		return 0, zero, ShapeErr(OpConv2D, "kernel.ne2 = %d != input.ne2 = %d (input channels)", kernel.Ne[2], in.Ne[2])
	}
	ow := ConvOutputSize(in.Ne[0], kernel.Ne[0], g.S0, g.P0, g.D0)
	oh := ConvOutputSize(in.Ne[1], kernel.Ne[1], g.S1, g.P1, g.D1)
	if ow <= 0 || oh <= 0 {
		return 0, zero, ShapeErr(OpConv2D, "input %s is too small for kernel %s (output %dx%d)", in.ShapeString(), kernel.ShapeString(), ow, oh)
	}
	return F32, [MaxDims]int64{ow, oh, kernel.Ne[3], in.Ne[3]}, nil
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

// --- convref (its math: refmath/convref.go) ---

// flopsConv3D is test_conv_3d's op_flops: N·OC·OD·OH·OW·(2·IC·KD·KH·KW - 1).
func flopsConv3D(dst *Tensor, srcs []*Tensor, p Params) int64 {
	k := srcs[0]
	return dst.NElements() * (2*k.Ne[0]*k.Ne[1]*k.Ne[2]*p.Int("IC") - 1)
}

// --- im2col (its math: refmath/im2col.go) ---
// im2col: the patches of data that a convolution with kernel's shape
// visits, one patch per output position (ggml_im2col(a = kernel, b = data);
// the kernel only supplies its shape).
//
// 	2-D (is_2d): kernel [KW, KH, IC, OC], data [IW, IH, IC, N]
// 	             -> dst [IC·KH·KW, OW, OH, N]
// 	1-D:         kernel [KW, IC, OC],     data [IW, IC, N]
// 	             -> dst [IC·KW, OW, N]
//
// OW = (IW + 2·p0 - d0·(KW-1) - 1)/s0 + 1 and OH likewise with s1, p1, d1.
// Within a patch the index is ic·KH·KW + ky·KW + kx; input position
// (ow·s0 + kx·d0 - p0, oh·s1 + ky·d1 - p1), zero outside the input. dst is
// f32 (data f32) or f16 (data f16 or f32, rounded to f16).

// ConvOutputSize is ggml_calc_conv_output_size: (in + 2p - d(k-1) - 1)/s + 1.
func ConvOutputSize(in, k, s, p, d int64) int64 { return (in+2*p-d*(k-1)-1)/s + 1 }

type convGeom struct {
	S0, S1, P0, P1, D0, D1 int64
}

func ConvParams(op Op, p Params) (convGeom, error) {
	g := convGeom{p.Int("s0"), p.Int("s1"), p.Int("p0"), p.Int("p1"), p.Int("d0"), p.Int("d1")}
	// 1-D im2col (is_2d false) never reads s1, p1 and d1: test-backend-ops
	// passes 0 for them.
	oneD := op == OpIm2col && p.Has("is_2d") && !p.Bool("is_2d")
	for _, c := range []struct {
		name string
		v    int64
		min  int64
	}{{"s0", g.S0, 1}, {"s1", g.S1, 1}, {"p0", g.P0, 0}, {"p1", g.P1, 0}, {"d0", g.D0, 1}, {"d1", g.D1, 1}} {
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
	g, err := ConvParams(OpIm2col, p)
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
	ow := ConvOutputSize(data.Ne[0], kernel.Ne[0], g.S0, g.P0, g.D0)
	if p.Bool("is_2d") {
		if kernel.Ne[2] != data.Ne[2] {
			return 0, zero, ShapeErr(OpIm2col, "kernel.ne2 = %d != data.ne2 = %d (input channels)", kernel.Ne[2], data.Ne[2])
		}
		oh := ConvOutputSize(data.Ne[1], kernel.Ne[1], g.S1, g.P1, g.D1)
		if ow <= 0 || oh <= 0 {
			return 0, zero, ShapeErr(OpIm2col, "data %s is too small for kernel %s (output %dx%d)", data.ShapeString(), kernel.ShapeString(), ow, oh)
		}
		return dt, [MaxDims]int64{kernel.Ne[0] * kernel.Ne[1] * kernel.Ne[2], ow, oh, data.Ne[3]}, nil
	}
	if kernel.Ne[1] != data.Ne[1] {
		return 0, zero, ShapeErr(OpIm2col, "kernel.ne1 = %d != data.ne1 = %d (input channels, 1-D)", kernel.Ne[1], data.Ne[1])
	}
	if data.Ne[3] != 1 {
		return 0, zero, ShapeErr(OpIm2col, "data %s has ne3 = %d, want 1 for 1-D im2col", data.ShapeString(), data.Ne[3])
	}
	if ow <= 0 {
		return 0, zero, ShapeErr(OpIm2col, "data %s is too small for kernel %s (output width %d)", data.ShapeString(), kernel.ShapeString(), ow)
	}
	return dt, [MaxDims]int64{kernel.Ne[0] * kernel.Ne[1], ow, data.Ne[2], 1}, nil
}

// --- convnd (its math: refmath/convnd.go) ---
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
		return 0, k.Ne, ShapeErr(OpConvTranspose1D, "kernel %s, input %s: want kernel [K, OC, IC, 1], input [L, IC] (a matrix)", k.ShapeString(), in.ShapeString())
	}
	if in.Ne[0] == 0 {
		// ggml's (L - 1)·s0 + K would be negative for s0 > K.
		return 0, k.Ne, ShapeErr(OpConvTranspose1D, "input %s has length 0", in.ShapeString())
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
		return 0, k.Ne, ShapeErr(OpConvTranspose2D, "kernel.ne3 = %d != input.ne2 = %d (input channels)", k.Ne[3], in.Ne[2])
	}
	if in.Ne[0] == 0 || in.Ne[1] == 0 {
		// ggml's (W - 1)·stride + KW would be negative for stride > KW.
		return 0, k.Ne, ShapeErr(OpConvTranspose2D, "input %s has width or height 0", in.ShapeString())
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
		return 0, k.Ne, ShapeErr(OpConv2DDW, "kernel %s, input %s: want kernel [KW, KH, 1, C] for input [W, H, C, N]", k.ShapeString(), in.ShapeString())
	}
	ow := convOut(in.Ne[0], k.Ne[0], p.Int("s0"), p.Int("p0"), p.Int("d0"))
	oh := convOut(in.Ne[1], k.Ne[1], p.Int("s1"), p.Int("p1"), p.Int("d1"))
	if ow <= 0 || oh <= 0 {
		return 0, k.Ne, ShapeErr(OpConv2DDW, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
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
		return 0, k.Ne, ShapeErr(OpIm2col3D, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
	}
	return p.Type("dst_type"), [MaxDims]int64{k.Ne[0] * k.Ne[1] * k.Ne[2] * IC, ow, oh, od * n}, nil
}

func inferCol2im1D(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a := srcs[0]
	if err := wantTypes(OpCol2im1D, "cols", a.Type, F32, F16, BF16); err != nil {
		return 0, a.Ne, err
	}
	if err := positive(OpCol2im1D, p, "s0", "oc"); err != nil {
		return 0, a.Ne, err
	}
	if a.Ne[2] != 1 || a.Ne[3] != 1 {
		return 0, a.Ne, ShapeErr(OpCol2im1D, "cols %s is not a matrix", a.ShapeString())
	}
	s0, oc, p0 := p.Int("s0"), p.Int("oc"), p.Int("p0")
	if p0 < 0 {
		return 0, a.Ne, &ParamError{Op: OpCol2im1D, Param: "p0", Msg: "must not be negative"}
	}
	K := a.Ne[0] / oc
	tOut := (a.Ne[1]-1)*s0 + K - 2*p0
	if K*oc != a.Ne[0] || K <= 0 || tOut <= 0 {
		return 0, a.Ne, ShapeErr(OpCol2im1D, "cols %s with oc = %d, s0 = %d, p0 = %d: ne0 must be K·oc and the output length positive", a.ShapeString(), oc, s0, p0)
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
		return 0, k.Ne, ShapeErr(OpConv3D, "kernel.ne3 = %d, input.ne3 = %d: want IC·OC = %d and IC·N = %d", k.Ne[3], in.Ne[3], c*oc, c*n)
	}
	ow := convOut(in.Ne[0], k.Ne[0], p.Int("s0"), p.Int("p0"), p.Int("d0"))
	oh := convOut(in.Ne[1], k.Ne[1], p.Int("s1"), p.Int("p1"), p.Int("d1"))
	od := convOut(in.Ne[2], k.Ne[2], p.Int("s2"), p.Int("p2"), p.Int("d2"))
	if ow <= 0 || oh <= 0 || od <= 0 {
		return 0, k.Ne, ShapeErr(OpConv3D, "input %s is too small for kernel %s", in.ShapeString(), k.ShapeString())
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
		return 0, x.Ne, ShapeErr(OpPool1D, "no output: ne0 = %d with k0 = %d, p0 = %d", x.Ne[0], p.Int("k0"), p.Int("p0"))
	}
	return F32, [MaxDims]int64{ow, x.Ne[1], x.Ne[2], x.Ne[3]}, nil
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
		return 0, x.Ne, ShapeErr(OpPool2D, "no output for x %s with these k, s, p", x.ShapeString())
	}
	return F32, [MaxDims]int64{ow, oh, x.Ne[2], x.Ne[3]}, nil
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
	// The result is never empty: an empty x has no values to sample.
	if x.NElements() == 0 {
		return 0, x.Ne, ShapeErr(OpUpscale, "x %s has no elements to upscale", x.ShapeString())
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

func inferRoll(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpRoll, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	if x.Nb[0] != uint64(x.Type.TypeSize()) {
		return 0, x.Ne, ShapeErr(OpRoll, "x.nb0 = %d, want the element size %d", x.Nb[0], x.Type.TypeSize())
	}
	for d, s := range p.Ints("shift") {
		if s <= -x.Ne[d] || s >= x.Ne[d] {
			return 0, x.Ne, &ParamError{Op: OpRoll, Param: "shift", Msg: fmt.Sprintf("|shift%d| = %d must be less than ne%d = %d", d, s, d, x.Ne[d])}
		}
	}
	return F32, x.Ne, nil
}

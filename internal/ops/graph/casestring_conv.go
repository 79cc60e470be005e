package graph

import (
	"github.com/ainekko/et/internal/ops"
)

// Case-string builders of the convolution, pooling and resampling ops:
// the ones ggml-et dispatches (im2col, conv_2d, at the end) and the ones
// it does not implement (registered through hostCaseBuilders).

// CONV_TRANSPOSE_1D(ne_input=[4] (197,32,1,1), ne_kernel=[4] (16,32,32,1),
// s0 (1), p0 (0), d0 (1)): test_conv_transpose_1d, f32 input and kernel.
func buildConvTranspose1D(b *csBuilder) {
	neIn := b.shape("ne_input", 197, 32, 1, 1)
	neK := b.shape("ne_kernel", 16, 32, 32, 1)
	s0 := b.int("s0", 1)
	p0 := b.int("p0", 0)
	d0 := b.int("d0", 1)
	if b.err != nil {
		return
	}
	in := b.leaf("input", ops.F32, neIn, defaultRange)
	k := b.leaf("kernel", ops.F32, neK, defaultRange)
	b.node("out", ops.OpConvTranspose1D, map[string]any{"s0": s0, "p0": p0, "d0": d0}, k, in)
}

// CONV_TRANSPOSE_2D(kernel_type (f16), ne_input=[4] (10,10,3,1),
// ne_kernel=[4] (3,3,3,1), stride (1)): test_conv_transpose_2d,
// ggml_conv_transpose_2d_p0.
func buildConvTranspose2D(b *csBuilder) {
	tk := b.typ("kernel_type", ops.F16)
	neIn := b.shape("ne_input", 10, 10, 3, 1)
	neK := b.shape("ne_kernel", 3, 3, 3, 1)
	stride := b.int("stride", 1)
	if b.err != nil {
		return
	}
	in := b.leaf("input", ops.F32, neIn, defaultRange)
	k := b.leaf("kernel", tk, neK, defaultRange)
	b.node("out", ops.OpConvTranspose2D, map[string]any{"stride": stride}, k, in)
}

// CONV_2D_DW(ne_input=[4] (64,64,16,1), ne_kernel=[4] (3,3,1,16),
// type_kernel (f32), stride (1), padding (0), dilation (1), cwhn):
// test_conv_2d_dw, ggml_conv_2d_dw_direct. cwhn stores input and kernel
// channel-innermost (cont of a permute) and permutes them back, as the
// test does. ggml then gives the result the input's CWHN strides; et's
// result is contiguous (same shape and values).
func buildConv2DDW(b *csBuilder) {
	neIn := b.shape("ne_input", 64, 64, 16, 1)
	neK := b.shape("ne_kernel", 3, 3, 1, 16)
	tk := b.typ("type_kernel", ops.F32)
	s := b.int("stride", 1)
	p := b.int("padding", 0)
	d := b.int("dilation", 1)
	cwhn := b.bool("cwhn")
	if b.err != nil {
		return
	}
	in := b.leaf("input", ops.F32, neIn, defaultRange)
	k := b.leaf("kernel", tk, neK, defaultRange)
	if cwhn {
		in = b.node("input_cwhn", ops.OpCont, nil, b.node("input_p", ops.OpPermute, map[string]any{"axes": []int64{1, 2, 0, 3}}, in))
		in = b.node("input_whcn", ops.OpPermute, map[string]any{"axes": []int64{2, 0, 1, 3}}, in)
		k = b.node("kernel_cwhn", ops.OpCont, nil, b.node("kernel_p", ops.OpPermute, map[string]any{"axes": []int64{2, 3, 1, 0}}, k))
		k = b.node("kernel_whcn", ops.OpPermute, map[string]any{"axes": []int64{3, 2, 0, 1}}, k)
	}
	b.node("out", ops.OpConv2DDW, map[string]any{"s0": s, "s1": s, "p0": p, "p1": p, "d0": d, "d1": d}, k, in)
}

// conv3Params reads s0..s2, p0..p2, d0..d2 with the given defaults.
func (b *csBuilder) conv3Params(s, p, d int64) map[string]any {
	out := map[string]any{}
	for _, k := range []struct {
		name string
		def  int64
	}{{"s", s}, {"p", p}, {"d", d}} {
		for i := 0; i < 3; i++ {
			key := k.name + string(rune('0'+i))
			out[key] = b.int(key, k.def)
		}
	}
	return out
}

// CONV_3D(N, IC, ID, IH, IW, OC, KD, KH, KW, s0..s2, p0..p2, d0..d2,
// type_kernel): test_conv_3d, ggml_conv_3d_direct: input f32 [IW, IH, ID,
// IC·N], kernel [KW, KH, KD, IC·OC]. The test's constructor has no
// defaults: the nine sizes are required; strides and dilations default
// to 1, paddings to 0.
func buildConv3D(b *csBuilder) {
	var sz [9]int64
	for i, k := range []string{"N", "IC", "ID", "IH", "IW", "OC", "KD", "KH", "KW"} {
		sz[i] = b.required(k)
		if sz[i] <= 0 && b.err == nil {
			b.fail("%s: want a positive size, got %d", k, sz[i])
		}
	}
	params := b.conv3Params(1, 0, 1)
	tk := b.typ("type_kernel", ops.F32)
	if b.err != nil {
		return
	}
	n, ic, id, ih, iw, oc, kd, kh, kw := sz[0], sz[1], sz[2], sz[3], sz[4], sz[5], sz[6], sz[7], sz[8]
	in := b.leaf("input", ops.F32, []int64{iw, ih, id, ic * n}, defaultRange)
	k := b.leaf("kernel", tk, []int64{kw, kh, kd, ic * oc}, defaultRange)
	params["IC"], params["N"], params["OC"] = ic, n, oc
	b.node("out", ops.OpConv3D, params, k, in)
}

// IM2COL_3D(type_input (f32), type_kernel (f16), dst_type (f32),
// ne_input=[4] (10,10,10,9), ne_kernel=[4] (3,3,3,1), IC (3), s0..s2 (1),
// p0..p2 (1), d0..d2 (1), v): test_im2col_3d; v views the input at
// ne - 2 in every dim.
func buildIm2col3D(b *csBuilder) {
	ti := b.typ("type_input", ops.F32)
	tk := b.typ("type_kernel", ops.F16)
	td := b.typ("dst_type", ops.F32)
	neIn := b.shape("ne_input", 10, 10, 10, 9)
	neK := b.shape("ne_kernel", 3, 3, 3, 1)
	ic := b.pos("IC", 3)
	params := b.conv3Params(1, 1, 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	in := b.leaf("input", ti, neIn, defaultRange)
	if v {
		sub := make([]int64, 4)
		for i := range sub {
			sub[i] = neIn[i] - 2
			if sub[i] <= 0 {
				b.fail("v=1 needs every ne_input > 2")
				return
			}
		}
		in = b.viewOf(in, ti, neIn, sub)
	}
	k := b.leaf("kernel", tk, neK, defaultRange)
	params["IC"], params["dst_type"] = ic, td.String()
	b.node("out", ops.OpIm2col3D, params, k, in)
}

// COL2IM_1D(type, K (4), OC (3), T_in (7), s0 (2), p0 (0)):
// test_col2im_1d on cols [K·OC, T_in].
func buildCol2im1D(b *csBuilder) {
	t := b.typ("type", ops.F32)
	k := b.pos("K", 4)
	oc := b.pos("OC", 3)
	tin := b.pos("T_in", 7)
	s0 := b.int("s0", 2)
	p0 := b.int("p0", 0)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpCol2im1D, map[string]any{"s0": s0, "oc": oc, "p0": p0}, b.leaf("cols", t, []int64{k * oc, tin}, defaultRange))
}

// POOL_1D(pool_type (avg), type_input (f32), ne_input=[4] (10,1,1,1), k0
// (3), s0 (3), p0 (0)): test_pool1d.
func buildPool1D(b *csBuilder) {
	op := b.nameValue("pool_type", "avg", ops.PoolOps)
	t := b.typ("type_input", ops.F32)
	ne := b.shape("ne_input", 10, 1, 1, 1)
	k0 := b.int("k0", 3)
	s0 := b.int("s0", 3)
	p0 := b.int("p0", 0)
	if b.err != nil {
		return
	}
	b.node("out", ops.OpPool1D, map[string]any{"op": op, "k0": k0, "s0": s0, "p0": p0}, b.leaf("input", t, ne, defaultRange))
}

// POOL_2D(pool_type (avg), type_input (f32), ne_input=[4] (10,10,3,1),
// k0, k1 (3), s0, s1 (1), p0, p1 (1)): test_pool2d.
func buildPool2D(b *csBuilder) {
	op := b.nameValue("pool_type", "avg", ops.PoolOps)
	t := b.typ("type_input", ops.F32)
	ne := b.shape("ne_input", 10, 10, 3, 1)
	params := map[string]any{"op": op}
	for _, k := range []struct {
		name string
		def  int64
	}{{"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 1}, {"p1", 1}} {
		params[k.name] = b.int(k.name, k.def)
	}
	if b.err != nil {
		return
	}
	b.node("out", ops.OpPool2D, params, b.leaf("input", t, ne, defaultRange))
}

// UPSCALE has two forms. test_upscale: UPSCALE(type, ne=[4]
// (512,512,3,1), scale_factor (2), mode, transpose): ggml_upscale of a
// (transposed first with transpose=1) to [ne0·sf, ne1·sf, ne2, ne3] of
// its (transposed) shape. test_interpolate: UPSCALE(type, ne=[4]
// (2,5,7,11), ne_tgt=[4] (5,7,11,13), mode): ggml_interpolate to ne_tgt.
// mode is "nearest", "bilinear" or "bicubic", optionally with
// "|align_corners" or "|antialias" (or ggml's integer value).
func buildUpscale(b *csBuilder) {
	t := b.typ("type", ops.F32)
	mode, align, aa := b.scaleMode("mode")
	params := map[string]any{"mode": mode, "align_corners": align, "antialias": aa}
	if _, ok := b.kv["ne_tgt"]; ok {
		ne := b.shape("ne", 2, 5, 7, 11)
		tgt := b.shape("ne_tgt", 5, 7, 11, 13)
		if b.err != nil {
			return
		}
		params["ne"] = tgt
		b.node("out", ops.OpUpscale, params, b.leaf("a", t, ne, defaultRange))
		return
	}
	ne := b.shape("ne", 512, 512, 3, 1)
	sf := b.int("scale_factor", 2)
	tr := b.bool("transpose")
	if b.err != nil {
		return
	}
	if sf <= 1 {
		b.fail("scale_factor = %d, want > 1 (ggml_upscale asserts it)", sf)
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	src := append([]int64(nil), ne...)
	if tr {
		x = b.node("a_transposed", ops.OpTranspose, nil, x)
		src[0], src[1] = src[1], src[0]
	}
	params["ne"] = []int64{src[0] * sf, src[1] * sf, src[2], src[3]}
	b.node("out", ops.OpUpscale, params, x)
}

// IM2COL(type_input (f32), type_kernel (f16), dst_type (f32), ne_input=[4]
// (10,10,3,1), ne_kernel=[4] (3,3,3,1), s0, s1 (1), p0, p1 (1), d0, d1
// (1), is_2D (1)): the kernel tensor only gives the patch shape.
func buildIm2col(b *csBuilder) {
	ti := b.typ("type_input", ops.F32)
	tk := b.typ("type_kernel", ops.F16)
	td := b.typ("dst_type", ops.F32)
	neIn := b.shape("ne_input", 10, 10, 3, 1)
	neK := b.shape("ne_kernel", 3, 3, 3, 1)
	params := map[string]any{}
	for _, k := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
		params[k] = b.int(k, 1)
	}
	params["is_2d"] = b.boolDef("is_2D", true)
	if b.err != nil {
		return
	}
	params["dst_type"] = td.String()
	kernel := b.leaf("kernel", tk, neK, defaultRange)
	input := b.leaf("input", ti, neIn, defaultRange)
	b.node("out", ops.OpIm2col, params, kernel, input)
}

// CONV_2D(ne_input=[4] (64,64,16,1), ne_kernel=[4], type_kernel (f32),
// stride0, stride1 (1), padding0, padding1 (0), dilation0, dilation1 (1),
// cwhn (0)): kernel [KW, KH, Cin, Cout] * input [W, H, Cin, N].
// test_conv_2d's default ne_kernel (3,3,1,16) does not match its default
// input's 16 channels, so et's default is [3, 3, ne_input2, 16]. cwhn=1
// stores input and kernel channel-innermost, as test_conv_2d does: input =
// permute(cont(permute(input, 1, 2, 0, 3)), 2, 0, 1, 3) and kernel =
// permute(cont(permute(kernel, 2, 3, 1, 0)), 3, 2, 0, 1), so conv_2d sees
// the WHCN shapes with permuted strides.
func buildConv2D(b *csBuilder) {
	neIn := b.shape("ne_input", 64, 64, 16, 1)
	if b.err != nil {
		return
	}
	neK := b.shape("ne_kernel", 3, 3, neIn[2], 16)
	tk := b.typ("type_kernel", ops.F32)
	params := map[string]any{
		"s0": b.int("stride0", 1), "s1": b.int("stride1", 1),
		"p0": b.int("padding0", 0), "p1": b.int("padding1", 0),
		"d0": b.int("dilation0", 1), "d1": b.int("dilation1", 1),
	}
	cwhn := b.bool("cwhn")
	if b.err != nil {
		return
	}
	kernel := b.leaf("kernel", tk, neK, defaultRange)
	input := b.leaf("input", ops.F32, neIn, defaultRange)
	if cwhn {
		perm := func(x, name string, axes ...int64) string {
			return b.node(name, ops.OpPermute, map[string]any{"axes": axes}, x)
		}
		input = perm(b.node("input_cwhn", ops.OpCont, nil, perm(input, "input_p", 1, 2, 0, 3)), "input_whcn", 2, 0, 1, 3)
		kernel = perm(b.node("kernel_cwhn", ops.OpCont, nil, perm(kernel, "kernel_p", 2, 3, 1, 0)), "kernel_whcn", 3, 2, 0, 1)
	}
	b.node("out", ops.OpConv2D, params, kernel, input)
}

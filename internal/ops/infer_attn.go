package ops

import (
	"fmt"
)

// --- mulmatid (its math: refmath/mulmatid.go) ---
// mul_mat_id: the expert matmul of mixture-of-experts models
// (ggml_mul_mat_id(as, b, ids)):
//
// 	as  [k, m, n_as]            the stacked expert matrices (any float or quantized type with a host codec)
// 	b   [k, n_b, n_tokens]      activations, f32 or f16 (n_b is 1 or n_used)
// 	ids [n_used, n_tokens] i32  the experts chosen per token
// 	dst [m, n_used, n_tokens]   dst[:, e, t] = as[:, :, ids[e, t]] · b[:, e % n_b, t]
//
// with exactly MulMat's numerics (b converted to the expert type's vec_dot
// type, quantized dot products per block; other types dequantized first,
// as mulmat_generic.go says), so each (e, t) column is
// bit-identical to a mul_mat of that expert with that activation row. An
// expert id outside [0, n_as) is an error.

func inferMulMatID(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	as, b, ids := srcs[0], srcs[1], srcs[2]
	var zero [MaxDims]int64
	if as.Type.Integer() {
		return 0, zero, ShapeErr(OpMulMatID, "as is %s, want a float or quantized type", as.Type)
	}
	if err := wantTypes(OpMulMatID, "b", b.Type, F32, F16); err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpMulMatID, "ids", ids.Type, I32); err != nil {
		return 0, zero, err
	}
	switch {
	case as.Ne[0] != b.Ne[0]:
		return 0, zero, ShapeErr(OpMulMatID, "as.ne0 = %d != b.ne0 = %d (the shared dimension k)", as.Ne[0], b.Ne[0])
	case as.Ne[3] != 1:
		return 0, zero, ShapeErr(OpMulMatID, "as %s has ne3 = %d, want 1", as.ShapeString(), as.Ne[3])
	case b.Ne[3] != 1:
		return 0, zero, ShapeErr(OpMulMatID, "b %s has ne3 = %d, want 1", b.ShapeString(), b.Ne[3])
	case ids.Ne[2] != 1 || ids.Ne[3] != 1:
		return 0, zero, ShapeErr(OpMulMatID, "ids %s is not 2-D", ids.ShapeString())
	case ids.Ne[1] != b.Ne[2]:
		return 0, zero, ShapeErr(OpMulMatID, "ids.ne1 = %d != b.ne2 = %d (the number of tokens)", ids.Ne[1], b.Ne[2])
	case b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0:
		return 0, zero, ShapeErr(OpMulMatID, "ids.ne0 = %d is not a multiple of b.ne1 = %d", ids.Ne[0], b.Ne[1])
	case as.Nb[0] != uint64(as.Type.TypeSize()):
		return 0, zero, ShapeErr(OpMulMatID, "as rows are not dense (nb0 = %d, want %d)", as.Nb[0], as.Type.TypeSize())
	}
	return F32, [MaxDims]int64{as.Ne[1], ids.Ne[0], b.Ne[2], 1}, nil
}

// flopsMulMatID counts 2·k·m per used expert and token, as test-backend-ops
// does.
func flopsMulMatID(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	as, ids := srcs[0], srcs[2]
	return 2 * as.Ne[0] * as.Ne[1] * ids.Ne[0] * ids.Ne[1]
}

// --- softmax (its math: refmath/softmax.go) ---
// soft_max (ggml_soft_max_ext, plus ggml_soft_max_add_sinks), per row of
// x [ne0, ne1, n_head = ne2, ne3], as the CPU computes it:
//
// 	w[i] = x[i]*scale + slope*mask[i, i1, i2 % mask.ne2, i3 % mask.ne3]
// 	m    = max(max_i w[i], sinks[i2])            (sinks term only with sinks)
// 	y[i] = exp(w[i]-m) / (Σ exp(w[j]-m) + exp(sinks[i2]-m))
//
// The exps and their sum are ggml's AVX-512 build's (softMaxExpRow): ggml's
// float32 vector exp over each row's first len&^15 values, each 16 of them
// summed in float32 as _mm512_reduce_add_ps does and added to a float64
// (ggml_float) sum, the rest by expf added one by one; the sum's inverse
// is applied in float32. In GOEXPERIMENT=simd builds on CPUs with AVX2 the
// scaling, the mask, the maximum and the final scaling run in vector
// lanes, and on amd64 CPUs with AVX2 and FMA (any build) the exps (silu_amd64.s).
// slope is 1 without ALiBi (max_bias = 0); with ALiBi, head h gets
// m0^(h+1) for h < n_head_log2 and m1^(2(h-n_head_log2)+1) otherwise, with
// n_head_log2 = 2^floor(log2(n_head)), m0 = 2^(-max_bias/n_head_log2) and
// m1 = 2^(-max_bias/2/n_head_log2).

func inferSoftMax(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpSoftMax, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	m, s := MaskSinkTensors(1, srcs, p)
	if m != nil {
		if err := wantTypes(OpSoftMax, "mask", m.Type, F32, F16); err != nil {
			return 0, x.Ne, err
		}
		if m.Ne[0] != x.Ne[0] {
			return 0, x.Ne, ShapeErr(OpSoftMax, "mask.ne0 = %d != x.ne0 = %d", m.Ne[0], x.Ne[0])
		}
		if m.Ne[1] < x.Ne[1] {
			return 0, x.Ne, ShapeErr(OpSoftMax, "mask.ne1 = %d < x.ne1 = %d (the mask needs a row per x row)", m.Ne[1], x.Ne[1])
		}
		for d := 2; d < MaxDims; d++ {
			if m.Ne[d] == 0 || x.Ne[d]%m.Ne[d] != 0 {
				return 0, x.Ne, ShapeErr(OpSoftMax, "mask.ne%d = %d does not divide x.ne%d = %d (the mask is broadcast over x)", d, m.Ne[d], d, x.Ne[d])
			}
		}
	}
	if s != nil {
		if err := wantTypes(OpSoftMax, "sinks", s.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		if s.NElements() != x.Ne[2] || s.Ne[0] != x.Ne[2] {
			return 0, x.Ne, ShapeErr(OpSoftMax, "sinks is %s, want [%d] (one per head, x.ne2)", s.ShapeString(), x.Ne[2])
		}
	}
	return F32, x.Ne, nil
}

// --- flashattn (its math: refmath/flashattn.go) ---
// flash_attn_ext (ggml_flash_attn_ext(q, k, v, mask, scale, max_bias,
// logit_softcap)), as ggml's CPU computes it on its reference path (one
// query row at a time, online softmax):
//
// 	q [d_k, n_q, n_head, n_batch] f32
// 	k [d_k, n_kv, n_head_kv, n_batch_kv] f16 or f32
// 	v [d_v, n_kv, n_head_kv, n_batch_kv] f16 or f32 (not transposed)
// 	mask [n_kv, >= n_q, ne2, ne3] f16 or f32, broadcast over heads and batches
// 	sinks [n_head] f32 (optional, ggml_flash_attn_ext_add_sinks; without
// 	    a mask the sinks param says that the fourth source is the sinks)
// 	dst [d_v, n_head, n_q, n_batch] f32 — permuted: dst[:, h, i, b] is
// 	    query i of head h
//
// Grouped-query attention: head h reads k/v head h / (n_head/n_head_kv),
// and batch b reads k/v batch b / (n_batch/n_batch_kv). For each key j:
// s = (k_j·q)·scale (scale is divided by logit_softcap first and
// s = softcap·tanh(s) applied when logit_softcap != 0), then
// s += slope·mask[j] (keys whose mask is -inf are skipped); the running
// max M, sum S and accumulator V are updated with expf in float32. With an
// f16 K, q is rounded to f16 before the dot product; with an f16 V, the
// accumulator is kept in f16 (each update rounded), as on the CPU.
// With sinks, the sink s = sinks[h] of query head h then enters the
// softmax as one more logit without a value: if s > M, V *= expf(M-s),
// S = S*expf(M-s) + 1, otherwise S += expf(s-M). Finally dst = V/S (0 if
// S = 0). K and V of another type than f16 and f32 have no host math here
// (ggml's CPU converts q to K's vec_dot type for those).

func inferFlashAttn(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	q, k, v := srcs[0], srcs[1], srcs[2]
	var ne [MaxDims]int64
	if err := wantTypes(OpFlashAttnExt, "q", q.Type, F32); err != nil {
		return 0, ne, err
	}
	for _, t := range []struct {
		name string
		x    *Tensor
	}{{"k", k}, {"v", v}} {
		if t.x.Type.Integer() {
			return 0, ne, ShapeErr(OpFlashAttnExt, "%s is %s, want a float or quantized type", t.name, t.x.Type)
		}
	}
	if k.Ne[0] != q.Ne[0] {
		return 0, ne, ShapeErr(OpFlashAttnExt, "k.ne0 = %d != q.ne0 = %d (d_k)", k.Ne[0], q.Ne[0])
	}
	if v.Ne[1] != k.Ne[1] {
		return 0, ne, ShapeErr(OpFlashAttnExt, "v.ne1 = %d != k.ne1 = %d (n_kv)", v.Ne[1], k.Ne[1])
	}
	for d := 2; d < MaxDims; d++ {
		for _, t := range []struct {
			name string
			x    *Tensor
		}{{"k", k}, {"v", v}} {
			if t.x.Ne[d] == 0 || q.Ne[d]%t.x.Ne[d] != 0 {
				return 0, ne, ShapeErr(OpFlashAttnExt, "%s.ne%d = %d does not divide q.ne%d = %d (grouped-query broadcast)", t.name, d, t.x.Ne[d], d, q.Ne[d])
			}
		}
	}
	m, sinks := MaskSinkTensors(3, srcs, p)
	if sinks != nil {
		if err := wantTypes(OpFlashAttnExt, "sinks", sinks.Type, F32); err != nil {
			return 0, ne, err
		}
		if sinks.NElements() != q.Ne[2] || sinks.Ne[0] != q.Ne[2] {
			return 0, ne, ShapeErr(OpFlashAttnExt, "sinks is %s, want [%d] (one per query head, q.ne2)", sinks.ShapeString(), q.Ne[2])
		}
	}
	if m != nil {
		if err := wantTypes(OpFlashAttnExt, "mask", m.Type, F16, F32); err != nil {
			return 0, ne, err
		}
		if m.Ne[0] != k.Ne[1] {
			return 0, ne, ShapeErr(OpFlashAttnExt, "mask.ne0 = %d != n_kv = %d", m.Ne[0], k.Ne[1])
		}
		if m.Ne[1] < q.Ne[1] {
			return 0, ne, ShapeErr(OpFlashAttnExt, "mask.ne1 = %d < n_q = %d", m.Ne[1], q.Ne[1])
		}
		for d := 2; d < MaxDims; d++ {
			if m.Ne[d] == 0 || q.Ne[d]%m.Ne[d] != 0 {
				return 0, ne, ShapeErr(OpFlashAttnExt, "mask.ne%d = %d does not divide q.ne%d = %d", d, m.Ne[d], d, q.Ne[d])
			}
		}
	}
	return F32, [MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, nil
}

func flopsFlashAttn(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	q, k, v := srcs[0], srcs[1], srcs[2]
	return 2 * q.Ne[1] * q.Ne[2] * q.Ne[3] * k.Ne[1] * (k.Ne[0] + v.Ne[0])
}

// --- rope (its math: refmath/rope.go) ---
// rope: rotary position embedding of x [ne0 = head dim, ne1 = heads,
// ne2 = tokens, ne3] with positions pos (i32), as ggml's CPU computes it
// (float32 throughout):
//
// 	theta_scale = freq_base^(-2/n_dims)
// 	theta_i     = p · theta_scale^i for pair i, built by repeated
// 	              multiplication (theta *= theta_scale), divided by
// 	              freq_factors[i] when given
// 	YaRN:       theta = freq_scale·theta_e mixed with theta_e by
// 	            ramp(i)·ext_factor; mscale = attn_factor (·(1 + 0.1·ln(1/freq_scale))
// 	            when ext_factor != 0); cos, sin = cos(theta)·mscale, sin(theta)·mscale
//
// normal mode rotates the pairs (x[2i], x[2i+1]); neox, mrope and imrope
// rotate (x[i], x[i + n_dims/2]). The rotated window starts at n_offs
// (ggml_rope_set_offset; 0 by default); the other dimensions are copied.
// The multi-position modes take four positions per token (pos has 4·ne2
// entries: t, h, w, e) and pick one per pair by sector = i mod Σsections.
// mrope (mode 8): t below sections[0], h below sections[0]+sections[1], w
// below that + sections[2], else e. imrope (mode 40, Qwen3-VL): h if
// sector%3 == 1 and sector < 3·sections[1], w if sector%3 == 2 and
// sector < 3·sections[2], t if sector%3 == 0 and sector < 3·sections[0],
// otherwise e. vision (mode 24) is mrope whose theta restarts at each
// section and that rotates all of ne0 = 2·n_dims as the pairs
// (x[i], x[i + n_dims]).

// RopeMode values are ggml's GGML_ROPE_TYPE_* numbers.
const (
	RopeNormal = 0
	RopeNeox   = 2
	RopeMRope  = 8
	RopeVision = 24
	RopeIMRope = 40
)

// RopeModes are the rope mode names, in the order of their values.
var RopeModes = []string{"normal", "neox", "mrope", "vision", "imrope"}

// RopeModeValue maps a case-file mode name to ggml's number.
func RopeModeValue(name string) (int32, error) {
	switch name {
	case "normal":
		return RopeNormal, nil
	case "neox":
		return RopeNeox, nil
	case "mrope":
		return RopeMRope, nil
	case "vision":
		return RopeVision, nil
	case "imrope":
		return RopeIMRope, nil
	}
	return 0, fmt.Errorf("unknown rope mode %q (want normal, neox, mrope, vision or imrope)", name)
}

func InferRope(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x, pos := srcs[0], srcs[1]
	if err := wantTypes(OpRope, "x", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if err := wantTypes(OpRope, "pos", pos.Type, I32); err != nil {
		return 0, x.Ne, err
	}
	nDims := p.Int("n_dims")
	if nDims <= 0 || nDims%2 != 0 || nDims > x.Ne[0] {
		return 0, x.Ne, &ParamError{Op: OpRope, Param: "n_dims", Msg: fmt.Sprintf("%d, want an even number in 2..ne0 = %d", nDims, x.Ne[0])}
	}
	mode := p.Str("mode")
	if _, err := RopeModeValue(mode); err != nil {
		return 0, x.Ne, &ParamError{Op: OpRope, Param: "mode", Msg: err.Error()}
	}
	if pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1 {
		return 0, x.Ne, ShapeErr(OpRope, "pos is %s, want a vector", pos.ShapeString())
	}
	nOffs := p.Int("n_offs")
	if nOffs < 0 || nOffs%2 != 0 || nOffs+nDims > x.Ne[0] {
		return 0, x.Ne, &ParamError{Op: OpRope, Param: "n_offs", Msg: fmt.Sprintf("%d, want an even number with n_offs + n_dims <= ne0 = %d", nOffs, x.Ne[0])}
	}
	if mode == "vision" {
		if 2*nDims != x.Ne[0] {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "n_dims", Msg: fmt.Sprintf("%d, vision rope wants ne0/2 = %d", nDims, x.Ne[0]/2)}
		}
		if nOffs != 0 {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "n_offs", Msg: "vision rope has no offset"}
		}
	}
	if RopeMulti(mode) {
		if pos.Ne[0] < 4*x.Ne[2] {
			return 0, x.Ne, ShapeErr(OpRope, "%s: pos.ne0 = %d, want 4*x.ne2 = %d (t, h, w, e positions per token)", mode, pos.Ne[0], 4*x.Ne[2])
		}
		s := p.Ints("sections")
		if len(s) != 4 {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: fmt.Sprintf("has %d entries, want 4", len(s))}
		}
		sum := int64(0)
		for _, v := range s {
			if v < 0 {
				return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: fmt.Sprintf("negative section %d", v)}
			}
			sum += v
		}
		if sum == 0 {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: mode + " needs sections that are not all zero"}
		}
		if sum > x.Ne[0] {
			return 0, x.Ne, &ParamError{Op: OpRope, Param: "sections", Msg: fmt.Sprintf("sum %d > ne0 = %d", sum, x.Ne[0])}
		}
	} else if pos.Ne[0] != x.Ne[2] {
		return 0, x.Ne, ShapeErr(OpRope, "pos.ne0 = %d != x.ne2 = %d (one position per token)", pos.Ne[0], x.Ne[2])
	}
	if len(srcs) > 2 {
		ff := srcs[2]
		if err := wantTypes(OpRope, "freq_factors", ff.Type, F32); err != nil {
			return 0, x.Ne, err
		}
		if ff.Ne[0] < nDims/2 {
			return 0, x.Ne, ShapeErr(OpRope, "freq_factors.ne0 = %d < n_dims/2 = %d", ff.Ne[0], nDims/2)
		}
	}
	return x.Type, x.Ne, nil
}

// RopeMulti reports whether a mode takes four positions per token (ggml's
// GGML_ROPE_TYPE_MROPE bit: mrope, vision, imrope).
func RopeMulti(mode string) bool { return mode == "mrope" || mode == "vision" || mode == "imrope" }

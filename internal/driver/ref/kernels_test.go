package ref

import (
	"context"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// kin is one input tensor of a kernel and the params field that carries it.
type kin struct {
	field string
	t     *ops.Tensor
}

// kcase is one kernel launch checked against the host reference math.
type kcase struct {
	name   string
	kernel string
	in     []kin
	// dst is the destination's initial content (nil: zeros of want's
	// type and shape); dstOp is the op value the dst desc carries.
	dst   *ops.Tensor
	dstOp ops.Op
	// dstField is the result's field ("" = "dst"); opParams are the dst
	// desc's op_params.
	dstField string
	opParams [abi.NumOpParams]int32
	set      func(v *abi.Values)
	want     *ops.Tensor
	// twoCalls: the kernel computes in two steps here (mul_mat with a
	// bias), which exec does not replay.
	twoCalls bool
}

func (c kcase) run(t *testing.T) {
	e := newEnv(t)
	var v abi.Values
	for _, in := range c.in {
		v.SetTensor(in.field, e.desc(in.t, e.upload(in.t), ""))
	}
	dst := c.dst
	if dst == nil {
		dst = ops.New(c.want.Type, c.want.Ne[:]...)
	}
	data := e.upload(dst)
	field := c.dstField
	if field == "" {
		field = "dst"
	}
	d := e.desc(dst, data, c.dstOp)
	d.OpParams = c.opParams
	v.SetTensor(field, d)
	if c.set != nil {
		c.set(&v)
	}
	args := e.encode(c.kernel, v)
	e.mustLaunch(c.kernel, args)
	sameBits(t, e.download(dst, data), c.want)
	// Again from the initial dst: a replay of the resolved launch where
	// the kernel has one, with the same result.
	if err := e.d.Write(e.ctx, driver.DevPtr(data-dst.Offs), dst.Buf); err != nil {
		t.Fatal(err)
	}
	e.mustLaunch(c.kernel, args)
	if rp, want := e.replayOf(c.kernel, args), replayable(c.kernel) && !c.twoCalls; (rp != nil) != want {
		t.Errorf("%s: replay kept = %v, want %v", c.kernel, rp != nil, want)
	}
	sameBits(t, e.download(dst, data), c.want)
}

func TestKernels(t *testing.T) {
	m := abi.Default()
	r := newRand(1)
	f32 := func(ne ...int64) *ops.Tensor { return randTensor(r, ops.F32, ne...) }
	x := f32(32, 3, 2)
	bcast := f32(32, 1)
	w := f32(32)
	var cases []kcase

	for _, op := range []ops.Op{ops.OpAdd, ops.OpSub, ops.OpMul} {
		cases = append(cases, kcase{
			name: "el_map_f32/" + string(op), kernel: "el_map_f32", dstOp: op,
			in:   []kin{{"src0", x}, {"src1", bcast}},
			want: refOut(t, op, []*ops.Tensor{x, bcast}, nil),
		})
	}
	for _, k := range []struct {
		kernel string
		op     ops.Op
	}{{"rms_norm_f32", ops.OpRMSNorm}, {"norm_f32", ops.OpNorm}, {"l2_norm_f32", ops.OpL2Norm}} {
		cases = append(cases, kcase{
			name: k.kernel, kernel: k.kernel, in: []kin{{"src0", x}},
			set:  func(v *abi.Values) { v.SetFloat("eps", 1e-5) },
			want: refOut(t, k.op, []*ops.Tensor{x}, map[string]any{"eps": float32(1e-5)}),
		})
	}
	cases = append(cases, kcase{
		name: "rms_norm_mul_f32", kernel: "rms_norm_mul_f32", in: []kin{{"src0", x}, {"src1", w}},
		set: func(v *abi.Values) { v.SetFloat("eps", 1e-6) },
		want: refOut(t, ops.OpMul, []*ops.Tensor{
			refOut(t, ops.OpRMSNorm, []*ops.Tensor{x}, map[string]any{"eps": float32(1e-6)}), w}, nil),
	})
	cases = append(cases, kcase{
		name: "scale_f32", kernel: "scale_f32", in: []kin{{"src0", x}},
		set:  func(v *abi.Values) { v.SetFloat("scale", 0.5); v.SetFloat("bias", 0.25) },
		want: refOut(t, ops.OpScale, []*ops.Tensor{x}, map[string]any{"scale": 0.5, "bias": 0.25}),
	})

	// softmax: plain, and with a mask, ALiBi and sinks.
	logits := f32(32, 4, 2)
	mask := f32(32, 4)
	sinks := f32(2)
	cases = append(cases,
		kcase{
			name: "softmax_f32", kernel: "softmax_f32", in: []kin{{"src0", logits}},
			set:  func(v *abi.Values) { v.SetFloat("scale", 0.125) },
			want: refOut(t, ops.OpSoftMax, []*ops.Tensor{logits}, map[string]any{"scale": 0.125}),
		},
		kcase{
			name: "softmax_f32/mask+sinks", kernel: "softmax_f32",
			in:  []kin{{"src0", logits}, {"src1", mask}, {"src2", sinks}},
			set: func(v *abi.Values) { v.SetFloat("scale", 0.5); v.SetFloat("max_bias", 8) },
			want: refOut(t, ops.OpSoftMax, []*ops.Tensor{logits, mask, sinks},
				map[string]any{"scale": 0.5, "max_bias": 8.0}),
		})

	// rope: neox, normal with freq factors and YaRN, imrope with sections.
	q := f32(64, 2, 3)
	pos := ops.FromInts(ops.I32, []int64{3}, []int64{0, 5, 17})
	ff := ops.FromF32(ops.F32, []int64{16}, randF32(r, 16, 1, 4))
	posIM := ops.FromInts(ops.I32, []int64{12}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	ropeSet := func(mode string, nDims int64, extra func(v *abi.Values)) func(v *abi.Values) {
		return func(v *abi.Values) {
			mv, _ := m.RopeMode(mode)
			v.SetInt("mode", int64(mv))
			v.SetInt("n_dims", nDims)
			v.SetInt("n_ctx_orig", 4096)
			v.SetFloat("freq_base", 10000)
			v.SetFloat("freq_scale", 1)
			v.SetFloat("attn_factor", 1)
			v.SetFloat("beta_fast", 32)
			v.SetFloat("beta_slow", 1)
			if extra != nil {
				extra(v)
			}
		}
	}
	ropeRaw := func(mode string, nDims int64, extra map[string]any) map[string]any {
		p := map[string]any{"mode": mode, "n_dims": nDims, "n_ctx_orig": 4096, "freq_base": 10000.0}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	cases = append(cases,
		kcase{
			name: "rope_f32/neox", kernel: "rope_f32", in: []kin{{"src0", q}, {"src1", pos}},
			set:  ropeSet("neox", 64, nil),
			want: refOut(t, ops.OpRope, []*ops.Tensor{q, pos}, ropeRaw("neox", 64, nil)),
		},
		kcase{
			name: "rope_f32/normal+freq_factors+yarn", kernel: "rope_f32",
			in: []kin{{"src0", q}, {"src1", pos}, {"src2", ff}},
			set: ropeSet("normal", 32, func(v *abi.Values) {
				v.SetFloat("freq_scale", 0.25)
				v.SetFloat("ext_factor", 1)
			}),
			want: refOut(t, ops.OpRope, []*ops.Tensor{q, pos, ff},
				ropeRaw("normal", 32, map[string]any{"freq_scale": 0.25, "ext_factor": 1.0})),
		},
		kcase{
			name: "rope_f32/imrope", kernel: "rope_f32", in: []kin{{"src0", q}, {"src1", posIM}},
			set: ropeSet("imrope", 64, func(v *abi.Values) {
				for i, s := range []int64{4, 2, 2, 0} {
					v.SetInt("sections["+string(rune('0'+i))+"]", s)
				}
			}),
			want: refOut(t, ops.OpRope, []*ops.Tensor{q, posIM},
				ropeRaw("imrope", 64, map[string]any{"sections": []int64{4, 2, 2, 0}})),
		})

	// glu: fused, fused swapped, split swiglu_oai with alpha and limit.
	gx := f32(64, 3)
	ga, gb := f32(32, 3), f32(32, 3)
	gluSet := func(op string, swapped int64, alpha, limit float32) func(v *abi.Values) {
		return func(v *abi.Values) {
			c, _ := m.GLUValue(op)
			v.SetInt("glu_op_type", int64(c))
			v.SetInt("swapped", swapped)
			v.SetFloat("alpha", alpha)
			v.SetFloat("limit", limit)
		}
	}
	cases = append(cases,
		kcase{
			name: "glu_f32/swiglu", kernel: "glu_f32", in: []kin{{"src0", gx}},
			set:  gluSet("swiglu", 0, 0, 0),
			want: refOut(t, ops.OpGLU, []*ops.Tensor{gx}, map[string]any{"op": "swiglu"}),
		},
		kcase{
			name: "glu_f32/geglu swapped", kernel: "glu_f32", in: []kin{{"src0", gx}},
			set:  gluSet("geglu", 1, 0, 0),
			want: refOut(t, ops.OpGLU, []*ops.Tensor{gx}, map[string]any{"op": "geglu", "swapped": true}),
		},
		kcase{
			name: "glu_f32/swiglu_oai split", kernel: "glu_f32", in: []kin{{"src0", ga}, {"src1", gb}},
			set: gluSet("swiglu_oai", 0, 1.5, 0.5),
			want: refOut(t, ops.OpGLU, []*ops.Tensor{ga, gb},
				map[string]any{"op": "swiglu_oai", "alpha": float32(1.5), "limit": float32(0.5)}),
		})

	for _, u := range []string{"silu", "gelu", "neg"} {
		cases = append(cases, kcase{
			name: "unary_f32/" + u, kernel: "unary_f32", in: []kin{{"src0", x}},
			set: func(v *abi.Values) {
				c, _ := m.UnaryValue(u)
				v.SetInt("unary_op", int64(c))
			},
			want: refOut(t, ops.OpUnary, []*ops.Tensor{x}, map[string]any{"op": u}),
		})
	}

	// get_rows of q8_0 data; set_rows into an f16 dst with i64 indices.
	table := randTensor(r, ops.Q8_0, 64, 5)
	rows := ops.FromInts(ops.I32, []int64{3}, []int64{4, 0, 2})
	cases = append(cases, kcase{
		name: "get_rows_f32/q8_0", kernel: "get_rows_f32", in: []kin{{"src0", table}, {"src1", rows}},
		want: refOut(t, ops.OpGetRows, []*ops.Tensor{table, rows}, nil),
	})
	cache := randTensor(r, ops.F16, 32, 6)
	newRows := f32(32, 2)
	idx := ops.FromInts(ops.I64, []int64{2}, []int64{5, 1})
	cases = append(cases, kcase{
		name: "set_rows_f32/f16", kernel: "set_rows_f32", in: []kin{{"src0", newRows}, {"src1", idx}},
		dst:  ops.Cont(cache),
		want: refOut(t, ops.OpSetRows, []*ops.Tensor{cache, newRows, idx}, nil),
	})

	// cont of a transposed view; cont_f16; cpy_f32_f16.
	xt := ops.Transpose(f32(32, 16))
	h := randTensor(r, ops.F16, 32, 2)
	cases = append(cases,
		kcase{name: "cont_f32/transposed", kernel: "cont_f32", in: []kin{{"src0", xt}},
			want: refOut(t, ops.OpCont, []*ops.Tensor{xt}, nil)},
		kcase{name: "cont_f16", kernel: "cont_f16", in: []kin{{"src0", h}},
			want: refOut(t, ops.OpCont, []*ops.Tensor{h}, nil)},
		kcase{name: "cpy_f32_f16", kernel: "cpy_f32_f16", in: []kin{{"src0", x}},
			want: refOut(t, ops.OpCpy, []*ops.Tensor{x}, map[string]any{"type": "f16"})})
	// The copy kernels write dst in src0's element order whatever dst's
	// shape: ggml_cpy of the transposed [16, 32] view into [32, 16] is
	// the view's elements in row-major order.
	flat := ops.FromF32(ops.F32, []int64{32, 16}, xt.ToF32())
	cases = append(cases, kcase{name: "cont_f32/reshaped dst", kernel: "cont_f32", in: []kin{{"src0", xt}},
		dst: ops.New(ops.F32, 32, 16), want: flat})

	// The seven mul_mat kernels, and mul_mat_Q8_0 with a bias.
	b32, b16 := f32(64, 3), randTensor(r, ops.F16, 64, 3)
	for _, k := range []struct {
		kernel string
		a      ops.Type
		b      *ops.Tensor
	}{
		{"mul_mat_f32", ops.F32, b32},
		{"mul_mat_f32_matrix_engine", ops.F32, b32},
		{"mul_mat_f16", ops.F16, b32},
		{"mul_mat_f16_matrix_engine", ops.F16, b16},
		{"mul_mat_Q4_0", ops.Q4_0, b32},
		{"mul_mat_Q4_0_matrix_engine", ops.Q4_0, b32},
		{"mul_mat_Q8_0", ops.Q8_0, b32},
	} {
		a := randTensor(r, k.a, 64, 16)
		cases = append(cases, kcase{
			name: k.kernel, kernel: k.kernel, in: []kin{{"src0", a}, {"src1", k.b}},
			want: refOut(t, ops.OpMulMat, []*ops.Tensor{a, k.b}, nil),
		})
	}
	aq := randTensor(r, ops.Q8_0, 64, 16)
	bias := f32(16, 3)
	cases = append(cases, kcase{
		name: "mul_mat_Q8_0/bias", kernel: "mul_mat_Q8_0", in: []kin{{"src0", aq}, {"src1", b32}, {"bias", bias}}, twoCalls: true,
		want: refOut(t, ops.OpAdd, []*ops.Tensor{refOut(t, ops.OpMulMat, []*ops.Tensor{aq, b32}, nil), bias}, nil),
	})

	// flash attention: f16 K/V with an f16 mask; f32 kernel without mask.
	fq := f32(64, 3, 4)
	fk, fv := randTensor(r, ops.F16, 64, 8, 2), randTensor(r, ops.F16, 64, 8, 2)
	fmask := randTensor(r, ops.F16, 8, 3)
	cases = append(cases,
		kcase{
			name: "flash_attn_ext_f16_me/mask", kernel: "flash_attn_ext_f16_me",
			in:   []kin{{"q", fq}, {"k", fk}, {"v", fv}, {"mask", fmask}},
			set:  func(v *abi.Values) { v.SetFloat("scale", 0.125); v.SetInt("has_mask", 1) },
			want: refOut(t, ops.OpFlashAttnExt, []*ops.Tensor{fq, fk, fv, fmask}, map[string]any{"scale": 0.125}),
		},
		kcase{
			name: "flash_attn_ext_f32", kernel: "flash_attn_ext_f32",
			in:   []kin{{"q", fq}, {"k", fk}, {"v", fv}, {"mask", fmask}}, // has_mask = 0: ignored
			set:  func(v *abi.Values) { v.SetFloat("scale", 0.25) },
			want: refOut(t, ops.OpFlashAttnExt, []*ops.Tensor{fq, fk, fv}, map[string]any{"scale": 0.25}),
		})

	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestMemops(t *testing.T) {
	e := newEnv(t)
	p, err := e.d.Malloc(context.Background(), 256, 64)
	if err != nil {
		t.Fatal(err)
	}
	var v abi.Values
	v.SetUint("op_type", 0)
	v.SetUint("value", 0x1A5) // memset uses the low byte
	v.SetUint("dst_ptr", uint64(p)+64)
	v.SetUint("size", 100)
	e.mustLaunch("memops", e.encode("memops", v))
	got := make([]byte, 256)
	if err := e.d.Read(e.ctx, p, got); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		want := byte(0)
		if i >= 64 && i < 164 {
			want = 0xA5
		}
		if b != want {
			t.Fatalf("byte %d = %#x, want %#x", i, b, want)
		}
	}

	t.Run("past the allocation", func(t *testing.T) {
		v.SetUint("size", 193)
		se := e.wantFault("memops", e.encode("memops", v), CodeException)
		if c := se.Contexts[0]; c.Cause != causeStoreAccessFault || c.TVal != uint64(p)+256 {
			t.Errorf("context %+v, want a store fault at %#x", c, uint64(p)+256)
		}
	})
	t.Run("not memset", func(t *testing.T) {
		v.SetUint("size", 1)
		v.SetUint("op_type", 1)
		e.wantFault("memops", e.encode("memops", v), CodeUserError)
	})
}

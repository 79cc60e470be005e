package abi

import (
	"fmt"
	"sort"
	"sync"
)

// The params structs of the ggml ET kernels at ggml d99724f
// (reference/ggml-et-backend.md §1.2, §2.3, §3). Every struct starts with
// whole ggml_tensor copies at 336-byte steps (offsets 0, 336, 672, ...),
// followed by trailing scalars.
//
// Offsets given by the reference: every trailing scalar written "name@off"
// in §1.2 (eps@672, scale@1344, glu_op_type@1008 ..., the first field of
// each scalar run), the uberkernel records of §3, and the sizes of §2.3.
// Offsets derived here with C layout rules (fields in declared order,
// natural alignment, sizeof rounded up to the struct's alignment):
//   - tensor offsets (i*336; the struct is 8-aligned and 336 = 42*8);
//   - rope: the rope_settings members after n_past@1344 (60 bytes: five
//     int32, six f32, int32 sections[4]) → 1348 ... 1400;
//   - gated_delta_net: H@2356 ... n_seqs_k@2380 between S_v@2352 and kda@2384;
//   - rwkv6/rwkv7: the pointers at 0, 8, ...; H, S, T between C and n_seqs;
//   - pad: lp[i]@672+4i, rp[i]@688+4i;
//   - memops: u32 op_type@0, u32 value@4, u64 dst_ptr@8, u64 size@16.
// Each derived layout ends where §2.3 says it does (asserted by the tests).

// layoutBuilder appends fields in declaration order.
type layoutBuilder struct {
	l   *Layout
	off int
}

func newLayout(name string, size int, doc string) *layoutBuilder {
	return &layoutBuilder{l: &Layout{Name: name, Size: size, Doc: doc}}
}

// tensors appends required tensor copies at the running offset.
func (b *layoutBuilder) tensors(names ...string) *layoutBuilder {
	for _, n := range names {
		b.l.Fields = append(b.l.Fields, Field{Name: n, Kind: KindTensor, Offset: b.off})
		b.off += TensorSize
	}
	return b
}

// optional appends an optional tensor copy (zero block when absent).
func (b *layoutBuilder) optional(name string) *layoutBuilder {
	b.l.Fields = append(b.l.Fields, Field{Name: name, Kind: KindTensor, Offset: b.off, Optional: true})
	b.off += TensorSize
	return b
}

// at appends scalars of one kind at consecutive offsets starting at off.
func (b *layoutBuilder) at(off int, k Kind, names ...string) *layoutBuilder {
	for _, n := range names {
		b.l.Fields = append(b.l.Fields, Field{Name: n, Kind: k, Offset: off})
		off += k.Size()
	}
	b.off = off
	return b
}

// array appends an array member as n fields "name[0]" ... "name[n-1]".
func (b *layoutBuilder) array(off int, k Kind, name string, n int) *layoutBuilder {
	for i := range n {
		b.l.Fields = append(b.l.Fields, Field{Name: fmt.Sprintf("%s[%d]", name, i), Kind: k, Offset: off + i*k.Size()})
	}
	b.off = off + n*k.Size()
	return b
}

func buildLayouts() map[string]*Layout {
	const T = TensorSize
	var all []*layoutBuilder
	add := func(b *layoutBuilder) { all = append(all, b) }

	// Three tensors, no scalars (ggml_et_binary_params and its look-alikes).
	for _, name := range []string{"binary", "elmap", "im2col", "get_rows", "set_rows", "ssm_conv"} {
		doc := map[string]string{
			"binary":   "ggml_et_binary_params: MUL_MAT (all but Q8_0) and CONV_2D {src0, src1, dst}",
			"elmap":    "ggml_et_elmap_params: ADD, SUB, MUL; el_map_f32 reads the operation from dst.op",
			"im2col":   "IM2COL {src0 kernel, src1 data, dst}; the kernel reads s0, s1, p0, p1, d0, d1, is_2d from dst.op_params[0..6]",
			"get_rows": "GET_ROWS {src0 data, src1 rows (i32), dst}",
			"set_rows": "SET_ROWS {src0 src, src1 idx (i64), dst}",
			"ssm_conv": "SSM_CONV {src0, src1, dst}",
		}[name]
		add(newLayout(name, 3*T, doc).tensors("src0", "src1", "dst"))
	}
	add(newLayout("solve_tri", 3*T, "SOLVE_TRI {A, B, X}").tensors("a", "b", "x"))

	// Two tensors, no scalars (ggml_et_cont_params and its look-alikes).
	for _, name := range []string{"cont", "repeat", "diag", "sqr", "sum_rows", "mean", "cumsum"} {
		add(newLayout(name, 2*T, fmt.Sprintf("%s {src0, dst}", name)).tensors("src0", "dst"))
	}

	add(newLayout("mm_q8", 4*T, "ggml_et_mm_q8_params: MUL_MAT with Q8_0 weights {src0, src1, dst, bias}; bias is a zero block unless MUL_MAT+ADD was fused").
		tensors("src0", "src1", "dst").optional("bias"))
	add(newLayout("mul_mat_id", 4*T, "MUL_MAT_ID {src0 as, src1 b, src2 ids (i32), dst}").
		tensors("src0", "src1", "src2", "dst"))

	add(newLayout("rope", 1408, "ROPE {src0, src1 pos, src2 freq factors (optional), dst, rope_settings@1344}; sections only for mode & MROPE").
		tensors("src0", "src1").optional("src2").tensors("dst").
		at(4*T, KindI32, "n_past", "n_dims", "mode", "n_ctx", "n_ctx_orig").
		at(4*T+20, KindF32, "freq_base", "freq_scale", "ext_factor", "attn_factor", "beta_fast", "beta_slow").
		array(4*T+44, KindI32, "sections", 4))

	for _, name := range []string{"rms_norm", "norm", "l2_norm"} {
		add(newLayout(name, 680, fmt.Sprintf("%s {src0, dst, f32 eps@672}", name)).
			tensors("src0", "dst").at(2*T, KindF32, "eps"))
	}
	add(newLayout("group_norm", 680, "GROUP_NORM {src0, dst, int32 n_groups@672, f32 eps@676}").
		tensors("src0", "dst").at(2*T, KindI32, "n_groups").at(2*T+4, KindF32, "eps"))
	add(newLayout("rms_norm_mul", 1016, "fused RMS_NORM+MUL {src0 norm input, src1 weights, dst (the MUL node), f32 eps@1008}").
		tensors("src0", "src1", "dst").at(3*T, KindF32, "eps"))

	add(newLayout("scale", 680, "SCALE {src0, dst, f32 scale@672, f32 bias@676}").
		tensors("src0", "dst").at(2*T, KindF32, "scale", "bias"))
	add(newLayout("clamp", 680, "CLAMP {src0, dst, f32 min@672, f32 max@676}").
		tensors("src0", "dst").at(2*T, KindF32, "min", "max"))
	add(newLayout("unary", 680, "UNARY {src0, dst, int32 unary_op@672} (a GGML_UNARY_OP value)").
		tensors("src0", "dst").at(2*T, KindI32, "unary_op"))
	add(newLayout("tri", 680, "TRI {src0, dst, int32 tri_type@672}").
		tensors("src0", "dst").at(2*T, KindI32, "tri_type"))

	add(newLayout("glu", 1024, "GLU {src0, src1 (zero block in single-tensor mode), dst, int32 glu_op_type@1008, int32 swapped@1012, f32 alpha@1016, f32 limit@1020}; alpha and limit only for SWIGLU_OAI").
		tensors("src0").optional("src1").tensors("dst").
		at(3*T, KindI32, "glu_op_type", "swapped").at(3*T+8, KindF32, "alpha", "limit"))
	add(newLayout("softmax", 1352, "SOFT_MAX {src0, src1 mask (optional), src2 sinks (optional), dst, f32 scale@1344, f32 max_bias@1348}").
		tensors("src0").optional("src1").optional("src2").tensors("dst").
		at(4*T, KindF32, "scale", "max_bias"))
	add(newLayout("flash_attn", 1688, "FLASH_ATTN_EXT {q, k, v, mask (optional), dst, f32 scale@1680, int32 has_mask@1684}").
		tensors("q", "k", "v").optional("mask").tensors("dst").
		at(5*T, KindF32, "scale").at(5*T+4, KindI32, "has_mask"))

	add(newLayout("concat", 1016, "CONCAT {src0, src1, dst, int32 dim@1008}").
		tensors("src0", "src1", "dst").at(3*T, KindI32, "dim"))
	add(newLayout("pad", 704, "PAD {src0, dst, int32 lp[4]@672, int32 rp[4]@688}").
		tensors("src0", "dst").array(2*T, KindI32, "lp", 4).array(2*T+16, KindI32, "rp", 4))
	add(newLayout("set", 688, "SET (in place) {src1, dst, int32 nb1@672, nb2@676, nb3@680, offset@684}; src0 is dst").
		tensors("src1", "dst").at(2*T, KindI32, "nb1", "nb2", "nb3", "offset"))
	add(newLayout("fill", 344, "FILL {dst, f32 c@336}").
		tensors("dst").at(T, KindF32, "c"))

	add(newLayout("ssm_scan", 2696, "SSM_SCAN {src0 ... src6, dst, int32 K@2688}").
		tensors("src0", "src1", "src2", "src3", "src4", "src5", "src6", "dst").at(8*T, KindI32, "K"))
	add(newLayout("gated_delta_net", 2400, "GATED_DELTA_NET {q, k, v, g, beta, state_in, dst, int32 S_v@2352 ... K@2388, f32 scale@2392}").
		tensors("q", "k", "v", "g", "beta", "state_in", "dst").
		at(7*T, KindI32, "S_v", "H", "H_q", "H_k", "n_tokens", "n_seqs", "n_seqs_q", "n_seqs_k", "kda", "K").
		at(7*T+40, KindF32, "scale"))
	add(newLayout("rwkv6", 80, "RWKV_WKV6: raw device pointers k, v, r, tf, td, state_in, dst, then int32 C@56, H, S, T, n_seqs@72").
		at(0, KindPtr, "k", "v", "r", "tf", "td", "state_in", "dst").
		at(56, KindI32, "C", "H", "S", "T", "n_seqs"))
	add(newLayout("rwkv7", 88, "RWKV_WKV7: raw device pointers r, w, k, v, a, b, state_in, dst, then int32 C@64, H, S, T, n_seqs@80").
		at(0, KindPtr, "r", "w", "k", "v", "a", "b", "state_in", "dst").
		at(64, KindI32, "C", "H", "S", "T", "n_seqs"))

	add(newLayout("memops", 24, "memops kernel (buffer clear, padding clear): u32 op_type (0 = MEMSET), u32 value, u64 dst_ptr, u64 size").
		at(0, KindU32, "op_type", "value").at(8, KindU64, "dst_ptr", "size"))
	add(newLayout("uberkernel", 24, "ggml_et_uberkernel_params, the launch args of kernel uberkernel: u32 num_insts, u32 inst_stride (12), u64 insts (device address), u64 params_blob (device address)").
		at(0, KindU32, "num_insts", "inst_stride").at(8, KindU64, "insts", "params_blob"))
	add(newLayout("uberkernel_inst", 12, "ggml_et_uberkernel_inst, one record of the uberkernel instruction array: u16 kernel_id, u16 flags (0), u32 params_offset (into the blob), u32 params_size").
		at(0, KindU16, "kernel_id", "flags").at(4, KindU32, "params_offset", "params_size"))

	m := make(map[string]*Layout, len(all))
	for _, b := range all {
		if err := b.l.check(); err != nil {
			panic("abi: " + err.Error()) // a bug in the table above; the tests catch it
		}
		if _, dup := m[b.l.Name]; dup {
			panic("abi: duplicate layout " + b.l.Name)
		}
		m[b.l.Name] = b.l
	}
	return m
}

var layoutRegistry = sync.OnceValue(buildLayouts)

// LookupLayout returns the params-struct layout called name (rope, mm_q8,
// memops ...; the names of reference/ggml-et-backend.md §2.3).
func LookupLayout(name string) (*Layout, bool) {
	l, ok := layoutRegistry()[name]
	return l, ok
}

// Layouts lists every params-struct layout, sorted by name.
func Layouts() []*Layout {
	reg := layoutRegistry()
	out := make([]*Layout, 0, len(reg))
	for _, l := range reg {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LayoutFor returns the params layout that kernel reads, by the default
// manifest's kernel map.
func LayoutFor(kernel string) (*Layout, bool) { return Default().LayoutFor(kernel) }

package plan

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
)

// The rows of the last ggml-et ops: TRI, SET, IM2COL, CONV_2D, SSM_CONV,
// SSM_SCAN, RWKV_WKV6, RWKV_WKV7 and GATED_DELTA_NET (reference
// ggml-et-backend.md §1.2). With them every op of ggml-et's graph_compute
// switch has a row.
//
// Where the reference gives the supports_op conditions, they are taken
// from it. SSM_CONV and SSM_SCAN are the exception: the reference says
// only "F32 (ids I32)" plus "exact stride and shape checks ... not
// reproduced here". Their checks below are inferred: they follow a public
// copy of ggml-et.cpp whose version the reference does not pin (its other
// rows agree with §1.2), and they are the shape relations ggml_ssm_conv
// and ggml_ssm_scan themselves imply.
var restRules = map[ops.Op]opRule{
	"tri": {check: checkTri, kernel: fixed("tri_f32"), fields: []string{"src0"}, scalars: scalarsTri},
	// SET runs in place: the params carry only src1 and dst (dst is ggml's
	// src0), so the result's memory must hold a before the launch.
	"set":      {check: checkSet, kernel: fixed("set_f32"), fields: []string{"", "src1"}, scalars: scalarsSet},
	"im2col":   {check: checkIm2col, kernel: fixed("im2col"), fields: []string{"src0", "src1"}, scalars: scalarsIm2col},
	"conv_2d":  {check: checkConv2D, kernel: fixed("conv_2d_f32_me"), fields: []string{"src0", "src1"}, scalars: scalarsConv2D},
	"ssm_conv": {check: checkSSMConv, kernel: fixed("ssm_conv_f32"), fields: []string{"src0", "src1"}},
	"ssm_scan": {check: checkSSMScan, kernel: fixed("ssm_scan_f32"),
		fields: []string{"src0", "src1", "src2", "src3", "src4", "src5", "src6"}, scalars: scalarsK},
	"rwkv_wkv6": {check: checkWKV6, kernel: fixed("rwkv_wkv6_f32"), pointers: true,
		fields: []string{"k", "v", "r", "tf", "td", "state_in"}, scalars: scalarsWKV6},
	"rwkv_wkv7": {check: checkWKV7, kernel: fixed("rwkv_wkv7_f32"), pointers: true,
		fields: []string{"r", "w", "k", "v", "a", "b", "state_in"}, scalars: scalarsWKV7},
	"gated_delta_net": {check: checkGatedDeltaNet, kernel: fixed("gated_delta_net_f32"),
		fields: []string{"q", "k", "v", "g", "beta", "state_in"}, scalars: scalarsGatedDeltaNet},
}

// --- TRI ---

func checkTri(c *checker) {
	x, d := c.src(0), c.dst()
	c.f32("src0", x, "dst", d)
	c.contiguous("src0", x)
	c.contiguous("dst", d)
	if name := c.p().Str("type"); name != "" {
		if _, ok := c.m.TriValue(name); !ok {
			c.failf("tri type %s has no value in the ABI manifest (no tri_types entry)", name)
		}
	}
}

// scalarsTri: tri_type = op_params[0], the ggml_tri_type value.
func scalarsTri(x *nodeCtx, b *binder) error {
	name := x.p().Str("type")
	v, ok := x.m.TriValue(name)
	if !ok {
		return fmt.Errorf("tri type %s has no value in the ABI manifest", name)
	}
	b.v.SetInt("tri_type", int64(v))
	b.op[0] = v
	return nil
}

// --- SET ---

// setView resolves ggml_set's view: nb1, nb2, nb3 and offset in bytes. A
// stride given as 0 in a case file means a's own contiguous stride
// (reference/case-format.md); ggml stores the resolved values.
func setView(x *nodeCtx) (nb [3]int64, offset int64) {
	a := x.src(0)
	cont := ops.ContiguousStrides(a.Type, a.Ne)
	for i, name := range []string{"nb1", "nb2", "nb3"} {
		nb[i] = x.p().Int(name)
		if nb[i] == 0 {
			nb[i] = int64(cont[i+1])
		}
	}
	return nb, x.p().Int("offset")
}

func setInplace(p ops.Params) bool { return !p.Has("inplace") || p.Bool("inplace") }

// checkSet: in place only; all f32 and contiguous; dst of src0's shape;
// src1.ne0 % 16 == 0; the view fits (its last element starts inside dst,
// as the crate tests it); nb1, nb2, nb3 and offset multiples of 64 (one
// cache line).
func checkSet(c *checker) {
	a, b, d := c.src(0), c.src(1), c.dst()
	if !setInplace(c.p()) {
		c.fail(CodeMode, "inplace", "false", "true", "set is not in place (inplace = false; ggml-et runs only ggml_set_inplace)")
	}
	c.f32("src0", a, "src1", b, "dst", d)
	c.contiguous("dst", d)
	c.contiguous("src0", a)
	c.contiguous("src1", b)
	if a.Ne != d.Ne {
		c.failf("dst and src0 differ in shape (dst.ne = %s, src0.ne = %s)", fmtNe(d), fmtNe(a))
	}
	c.mod("src1.ne0", b.Ne[0], 16)
	nb, off := setView(c.nodeCtx)
	last := off
	strides := [4]int64{int64(d.Type.TypeSize()), nb[0], nb[1], nb[2]}
	for i := range ops.MaxDims {
		if b.Ne[i] > 0 {
			last += (b.Ne[i] - 1) * strides[i]
		}
	}
	if size := int64(d.NBytes()); last > size {
		c.failf("set view does not fit in dst (last element at byte %d, dst has %d bytes)", last, size)
	}
	for i, v := range []int64{nb[0], nb[1], nb[2], off} {
		c.mod([]string{"nb1", "nb2", "nb3", "offset"}[i], v, 64)
	}
}

// scalarsSet: nb1, nb2, nb3 and offset, from op_params[0..3] (ggml_set's
// order; op_params[4] is inplace).
func scalarsSet(x *nodeCtx, b *binder) error {
	nb, off := setView(x)
	vals := []int64{nb[0], nb[1], nb[2], off}
	for i, name := range []string{"nb1", "nb2", "nb3", "offset"} {
		if vals[i] < math.MinInt32 || vals[i] > math.MaxInt32 {
			return fmt.Errorf("set %s = %d does not fit ggml's int32 op_params", name, vals[i])
		}
		b.v.SetInt(name, vals[i])
		b.op[i] = int32(vals[i])
	}
	if setInplace(x.p()) {
		b.op[4] = 1
	}
	return nil
}

// --- IM2COL and CONV_2D ---

// checkIm2col: (dst f32 and data f32) or (dst f16 and data f16/f32); dst
// and data contiguous with element-sized nb0. The kernel (src0) only
// supplies its shape.
func checkIm2col(c *checker) {
	data, d := c.src(1), c.dst()
	switch d.Type {
	case ops.F32:
		c.typeIn("src1", data, ops.F32)
	case ops.F16:
		c.typeIn("src1", data, ops.F16, ops.F32)
	default:
		c.fail(CodeType, "dst", d.Type.String(), "f32,f16", "dst type %s not in {f32, f16}", d.Type)
	}
	c.contiguous("dst", d)
	c.contiguous("src1", data)
	c.nb0Elem("dst", d)
	c.nb0Elem("src1", data)
}

// convOpParams are ggml's op_params of IM2COL and CONV_2D: s0, s1, p0,
// p1, d0, d1 (then is_2d for IM2COL).
func convOpParams(x *nodeCtx, b *binder) {
	for i, name := range []string{"s0", "s1", "p0", "p1", "d0", "d1"} {
		b.op[i] = int32(x.p().Int(name))
	}
}

// scalarsIm2col: no trailing scalars; the kernel reads s0, s1, p0, p1,
// d0, d1, is_2d from dst.op_params[0..6].
func scalarsIm2col(x *nodeCtx, b *binder) error {
	convOpParams(x, b)
	if !x.p().Has("is_2d") || x.p().Bool("is_2d") {
		b.op[6] = 1
	}
	return nil
}

// scalarsConv2D: no trailing scalars; conv_2d_f32_me reads its stride and
// padding from dst.op_params (ggml_conv_2d_direct's order).
func scalarsConv2D(x *nodeCtx, b *binder) error {
	convOpParams(x, b)
	return nil
}

// The L2-scratchpad budget model of conv_2d_f32_me's supports_op.
const (
	conv2dL2Budget   = 1500 * 1024          // bytes of L2 scratchpad the kernel plans with
	conv2dScratch    = 32 * 2 * 16 * 16 * 4 // per-hart partial tiles: 32 minions x 2 tiles x 1 KiB
	conv2dTilesPerHW = 2                    // MAX_TILES_PER_HART
)

// conv2dBudget is the kernel's sizing: with K_TILES = Cin/16 tiles of
// per-tile bytes, one buffer when all fit in the budget, otherwise double
// buffering with the largest chunk of tiles (dividing K_TILES) whose two
// buffers fit. It returns the chunk count and, when more than one chunk
// is needed, whether the output tiles fit the workers.
func conv2dBudget(kw, kh, cin, cout, h, p1, ow, oh int64) (chunks, tiles, maxTiles int64) {
	owPad := (ow + 15) &^ 15
	needStage := ow%16 != 0
	var stage int64
	if needStage {
		stage = cout * oh * owPad * 4
	}
	budget := int64(conv2dL2Budget) - stage - conv2dScratch
	perKT := kh*kw*cout*16*4 + kw*16*(h+2*p1)*owPad*4
	kTiles := cin / 16
	chunks = 1
	if kTiles*perKT > budget {
		chunk := kTiles
		for chunk > 1 && 2*chunk*perKT > budget {
			chunk--
		}
		for chunk > 1 && kTiles%chunk != 0 {
			chunk--
		}
		chunks = kTiles / max(chunk, 1)
	}
	workers := int64(1024)
	if needStage {
		workers = 32
	}
	return chunks, oh * ((ow + 15) / 16) * (cout / 16), workers * conv2dTilesPerHW
}

// checkConv2D: all f32 and contiguous; s0, s1 >= 1; d0 == d1 == 1;
// Cin % 16 == 0; Cout % 16 == 0; N == 1; OW, OH > 0; then the L2
// budget model (only once the rest holds, as the crate breaks out early).
func checkConv2D(c *checker) {
	flt, in, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", flt, "src1", in, "dst", d)
	c.contiguous("dst", d)
	c.contiguous("src0", flt)
	c.contiguous("src1", in)
	p := c.p()
	for _, s := range []string{"s0", "s1"} {
		if v := p.Int(s); v < 1 {
			c.failf("%s < 1 (%s = %d)", s, s, v)
		}
	}
	if d0, d1 := p.Int("d0"), p.Int("d1"); d0 != 1 || d1 != 1 {
		c.fail(CodeDilation, "d0,d1", fmt.Sprintf("%d,%d", d0, d1), "1,1", "dilation != 1 (d0 = %d, d1 = %d)", d0, d1)
	}
	kw, kh, cin, cout := flt.Ne[0], flt.Ne[1], flt.Ne[2], flt.Ne[3]
	c.mod("Cin", cin, 16)
	c.mod("Cout", cout, 16)
	if in.Ne[3] != 1 {
		c.fail(CodeBatch, "N", fmt.Sprint(in.Ne[3]), "1", "N != 1 (N = %d)", in.Ne[3])
	}
	ow, oh := d.Ne[0], d.Ne[1]
	if ow <= 0 || oh <= 0 {
		c.failf("OW or OH <= 0 (OW = %d, OH = %d)", ow, oh)
	}
	if len(c.reasons) > 0 {
		return
	}
	chunks, tiles, maxTiles := conv2dBudget(kw, kh, cin, cout, in.Ne[1], p.Int("p1"), ow, oh)
	if chunks > 1 && tiles > maxTiles {
		c.fail(CodeBudget, "output tiles", fmt.Sprint(tiles), fmt.Sprint(maxTiles), "L2 scratchpad budget: %d K-chunks and OH*ceil(OW/16)*Cout/16 = %d output tiles > %d", chunks, tiles, maxTiles)
	}
}

// --- SSM_CONV and SSM_SCAN (checks inferred, see restRules) ---

// rowsDense: nb0 == 4 and nb1 == ne0*4 (the first two dims dense; f32).
func (c *checker) rowsDense(label string, t *ops.Tensor) {
	c.nb0(label, t, 4)
	if want := uint64(t.Ne[0]) * 4; t.Nb[1] != want {
		c.fail(CodeStride, label, fmt.Sprint(t.Nb[1]), fmt.Sprint(want), "%s.nb1 != ne0*4 (nb1 = %d, ne0*4 = %d)", label, t.Nb[1], want)
	}
}

// eq adds a reason when a != b.
func (c *checker) eq(what string, a, b int64) {
	if a != b {
		c.fail(CodeEqual, what, fmt.Sprint(a), fmt.Sprint(b), "%s (%d != %d)", what, a, b)
	}
}

// checkSSMConv: sx [d_conv-1+n_t, d_inner, n_s], c [d_conv, d_inner] ->
// dst [d_inner, n_t, n_s]; all f32; sx and c with dense rows; dst
// contiguous; the shape relations of ggml_ssm_conv.
func checkSSMConv(c *checker) {
	sx, w, d := c.src(0), c.src(1), c.dst()
	c.f32("src0", sx, "src1", w, "dst", d)
	c.rowsDense("src0", sx)
	c.rowsDense("src1", w)
	c.contiguous("dst", d)
	c.eq("src1.ne1 != src0.ne1", w.Ne[1], sx.Ne[1])
	c.eq("dst.ne0 != src0.ne1", d.Ne[0], sx.Ne[1])
	c.eq("dst.ne1 != src0.ne0 - src1.ne0 + 1", d.Ne[1], sx.Ne[0]-w.Ne[0]+1)
	c.eq("dst.ne2 != src0.ne2", d.Ne[2], sx.Ne[2])
}

// checkSSMScan: sources s, x, dt, A, B, C, ids (src0..src6). s, dt, A,
// ids and dst contiguous; x, B, C with dense rows; the shape relations of
// ggml_ssm_scan.
func checkSSMScan(c *checker) {
	s, x, dt, a, b, cc, ids, d := c.src(0), c.src(1), c.src(2), c.src(3), c.src(4), c.src(5), c.src(6), c.dst()
	c.f32("dst", d, "src0", s, "src1", x, "src2", dt, "src3", a, "src4", b, "src5", cc)
	c.typeIn("src6", ids, ops.I32)
	c.contiguous("dst", d)
	c.contiguous("src0", s)
	c.contiguous("src2", dt)
	c.contiguous("src3", a)
	c.contiguous("src6", ids)
	c.rowsDense("src1", x)
	c.rowsDense("src4", b)
	c.rowsDense("src5", cc)
	c.eq("s.ne0 != B.ne0 (d_state)", s.Ne[0], b.Ne[0])
	c.eq("s.ne1 != x.ne0 (head_dim)", s.Ne[1], x.Ne[0])
	c.eq("s.ne2 != x.ne1 (n_head)", s.Ne[2], x.Ne[1])
	c.eq("x.ne2 != dt.ne1 (n_t)", x.Ne[2], dt.Ne[1])
	c.eq("x.ne3 != dt.ne2 (n_seqs)", x.Ne[3], dt.Ne[2])
	c.eq("B.ne2 != x.ne2 (n_t)", b.Ne[2], x.Ne[2])
	c.eq("B.ne3 != x.ne3 (n_seqs)", b.Ne[3], x.Ne[3])
	if b.Ne != cc.Ne {
		c.failf("B and C differ in shape (B.ne = %s, C.ne = %s)", fmtNe(b), fmtNe(cc))
	}
	c.eq("ids.ne0 != x.ne3 (n_seqs)", ids.Ne[0], x.Ne[3])
	c.eq("A.ne1 != x.ne1 (n_head)", a.Ne[1], x.Ne[1])
	if a.Ne[0] != 1 && a.Ne[0] != s.Ne[0] {
		c.failf("A.ne0 is neither 1 nor d_state (A.ne0 = %d, d_state = %d)", a.Ne[0], s.Ne[0])
	}
	if b.Ne[1] == 0 || x.Ne[1]%b.Ne[1] != 0 {
		c.failf("n_head %% n_group != 0 (n_head = %d, n_group = %d)", x.Ne[1], b.Ne[1])
	}
}

// scalarsK: K = op_params[0] (the snapshot slot count of ssm_scan and
// gated_delta_net).
func scalarsK(x *nodeCtx, b *binder) error {
	k := x.p().Int("K")
	if !x.p().Has("K") {
		k = 1
	}
	b.v.SetInt("K", k)
	b.op[0] = int32(k)
	return nil
}

// --- RWKV_WKV6 and RWKV_WKV7 ---

// rwkvHeadSize is the vector width the RWKV and gated-delta-net kernels
// need the head size to be a multiple of.
const rwkvHeadSize = 8

// headSize requires the head size k.ne0 to be a multiple of 8 (in the
// mod format the suggestions of `et ops explain` read).
func (c *checker) headSize(k *ops.Tensor) { c.mod("head size (k.ne0)", k.Ne[0], rwkvHeadSize) }

func checkWKV6(c *checker) {
	labels := []string{"k", "v", "r", "tf", "td", "state"}
	for i, l := range labels {
		c.typeIn(l, c.src(i), ops.F32)
	}
	c.headSize(c.src(0))
	for i, l := range labels {
		c.contiguous(l, c.src(i))
	}
}

func checkWKV7(c *checker) {
	labels := []string{"r", "w", "k", "v", "a", "b", "state"}
	for i, l := range labels {
		c.typeIn(l, c.src(i), ops.F32)
	}
	c.headSize(c.src(2))
	for i, l := range labels {
		c.contiguous(l, c.src(i))
	}
}

// rwkvScalars sets C = S·H, H, S, T and n_seqs (int32 each).
func rwkvScalars(b *binder, s, h, t, nSeqs int64) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"C", s * h}, {"H", h}, {"S", s}, {"T", t}, {"n_seqs", nSeqs}} {
		if f.v > math.MaxInt32 {
			return fmt.Errorf("rwkv %s = %d does not fit int32", f.name, f.v)
		}
		b.v.SetInt(f.name, f.v)
	}
	return nil
}

// scalarsWKV6: S and H from k, T from v, n_seqs from state.ne1 (as
// ggml_et_op_rwkv_wkv6 reads them).
func scalarsWKV6(x *nodeCtx, b *binder) error {
	k := x.src(0)
	return rwkvScalars(b, k.Ne[0], k.Ne[1], x.src(1).Ne[2], x.src(5).Ne[1])
}

// scalarsWKV7: S and H from k (src2), T from w (src1), n_seqs from
// state.ne1.
func scalarsWKV7(x *nodeCtx, b *binder) error {
	k := x.src(2)
	return rwkvScalars(b, k.Ne[0], k.Ne[1], x.src(1).Ne[2], x.src(6).Ne[1])
}

// --- GATED_DELTA_NET ---

// checkGatedDeltaNet: all f32; S_v % 8 == 0; g scalar or per-element;
// beta scalar; q, k, v with element-sized nb0 (rows dense, higher dims
// may be strided); g, beta and state contiguous.
func checkGatedDeltaNet(c *checker) {
	q, k, v, g, beta, state, d := c.src(0), c.src(1), c.src(2), c.src(3), c.src(4), c.src(5), c.dst()
	c.f32("dst", d, "q", q, "k", k, "v", v, "g", g, "beta", beta, "state", state)
	sv := v.Ne[0]
	c.mod("S_v", sv, rwkvHeadSize)
	if g.Ne[0] != 1 && g.Ne[0] != sv {
		c.failf("g.ne0 is neither 1 nor S_v (g.ne0 = %d, S_v = %d)", g.Ne[0], sv)
	}
	if beta.Ne[0] != 1 {
		c.failf("beta.ne0 != 1 (ne0 = %d)", beta.Ne[0])
	}
	c.nb0("q", q, 4)
	c.nb0("k", k, 4)
	c.nb0("v", v, 4)
	c.contiguous("g", g)
	c.contiguous("beta", beta)
	c.contiguous("state", state)
}

// scalarsGatedDeltaNet fills the kernel's scalars as
// ggml_et_op_gated_delta_net does: sizes from v, q and k; kda = (g.ne0 ==
// S_v); K = op_params[0]; scale = 1/sqrtf(S_v).
func scalarsGatedDeltaNet(x *nodeCtx, b *binder) error {
	q, k, v, g := x.src(0), x.src(1), x.src(2), x.src(3)
	sv := v.Ne[0]
	kda := int64(0)
	if g.Ne[0] == sv {
		kda = 1
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"S_v", sv}, {"H", v.Ne[1]}, {"H_q", q.Ne[1]}, {"H_k", k.Ne[1]}, {"n_tokens", v.Ne[2]},
		{"n_seqs", v.Ne[3]}, {"n_seqs_q", q.Ne[3]}, {"n_seqs_k", k.Ne[3]}, {"kda", kda},
	} {
		if f.v > math.MaxInt32 {
			return fmt.Errorf("gated_delta_net %s = %d does not fit int32", f.name, f.v)
		}
		b.v.SetInt(f.name, f.v)
	}
	if err := scalarsK(x, b); err != nil {
		return err
	}
	b.v.SetFloat("scale", GatedDeltaNetScale(sv))
	return nil
}

// GatedDeltaNetScale is the kernel's output scale 1/sqrtf(S_v), in float32.
func GatedDeltaNetScale(sv int64) float32 {
	return 1 / float32(math.Sqrt(float64(float32(sv))))
}

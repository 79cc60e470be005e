package plan

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
)

// recurrentRules are the rows of ssm_conv, ssm_scan, rwkv_wkv6/7 and
// gated_delta_net, the recurrent ops (reference ggml-et-backend.md §1.2).
// Where the reference gives the supports_op conditions, they are taken
// from it. SSM_CONV and SSM_SCAN are the exception: the reference says
// only "F32 (ids I32)" plus "exact stride and shape checks ... not
// reproduced here". Their checks below are inferred: they follow a public
// copy of ggml-et.cpp whose version the reference does not pin (its other
// rows agree with §1.2), and they are the shape relations ggml_ssm_conv
// and ggml_ssm_scan themselves imply.
var recurrentRules = map[ops.Op]opRule{
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

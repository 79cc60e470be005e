package ops

import (
	"fmt"
	"math"
)

// --- rwkv (its math: refmath/rwkv.go) ---
// rwkv_wkv6 and rwkv_wkv7: the RWKV time-mixing recurrences, per head of
// size S, in the CPU's scalar float32 order. With C = S·H channels, T
// tokens split evenly into n_seqs sequences (state [S·S·H, n_seqs], head h
// holding the S×S block state[h·S·S + i·S + j]), the result is
// [S·H, T + S·n_seqs]: the T output rows, then the new states (same
// layout as the input state).
//
// wkv6(k, v, r, tf, td, state): k, v, r, td [S, H, T], tf [S, H] (one
// "time_first" bonus per channel). Per token and head, for i, j < S:
//
// 	kv = v[j]·k[i];  y[j] += (kv·tf[i] + state[i][j])·r[i];  state[i][j] = state[i][j]·td[i] + kv
//
// wkv7(r, w, k, v, a, b, state): all [S, H, T]. Per token, head and i < S:
//
// 	sa = Σ_j a[j]·state[i][j]
// 	state[i][j] = state[i][j]·w[j] + v[i]·k[j] + sa·b[j];  y[i] = Σ_j state[i][j]·r[j]

type RWKVDims struct{ S, H, T, NSeqs int64 }

func RWKVShape(op Op, names []string, srcs []*Tensor, perToken []int) (RWKVDims, error) {
	state := srcs[len(srcs)-1]
	ref := srcs[perToken[0]]
	d := RWKVDims{S: ref.Ne[0], H: ref.Ne[1], T: ref.Ne[2], NSeqs: state.Ne[1]}
	for i, x := range srcs {
		if err := wantTypes(op, names[i], x.Type, F32); err != nil {
			return d, err
		}
	}
	for _, i := range perToken {
		if x := srcs[i]; x.Ne != [MaxDims]int64{d.S, d.H, d.T, 1} {
			return d, ShapeErr(op, "%s %s, want [S, H, T] = [%d, %d, %d, 1] like %s", names[i], x.ShapeString(), d.S, d.H, d.T, names[perToken[0]])
		}
	}
	switch {
	case d.NSeqs == 0 || state.NElements() != d.S*d.S*d.H*d.NSeqs:
		return d, ShapeErr(op, "state %s has %d elements, want S·S·H·n_seqs = %d·%d·%d·%d", state.ShapeString(), state.NElements(), d.S, d.S, d.H, d.NSeqs)
	case d.T%d.NSeqs != 0:
		return d, ShapeErr(op, "T = %d tokens do not split evenly into n_seqs = %d sequences", d.T, d.NSeqs)
	}
	return d, nil
}

var (
	WKV6Names = []string{"k", "v", "r", "tf", "td", "state"}
	WKV7Names = []string{"r", "w", "k", "v", "a", "b", "state"}
)

func inferWKV6(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	d, err := RWKVShape(OpRWKVWKV6, WKV6Names, srcs, []int{0, 1, 2, 4})
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	if tf := srcs[3]; tf.NElements() != d.S*d.H {
		return 0, [MaxDims]int64{}, ShapeErr(OpRWKVWKV6, "tf %s has %d elements, want S·H = %d", tf.ShapeString(), tf.NElements(), d.S*d.H)
	}
	return F32, [MaxDims]int64{d.S * d.H, d.T + d.S*d.NSeqs, 1, 1}, nil
}

func inferWKV7(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	d, err := RWKVShape(OpRWKVWKV7, WKV7Names, srcs, []int{2, 0, 1, 3, 4, 5})
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	return F32, [MaxDims]int64{d.S * d.H, d.T + d.S*d.NSeqs, 1, 1}, nil
}

// --- ssm (its math: refmath/ssm.go) ---
// ssm_conv and ssm_scan: the Mamba (1 and 2) recurrent blocks, with the
// CPU's float32 arithmetic.
//
// ssm_conv(sx, c): a depthwise causal 1-D convolution over a sliding
// window. sx [d_conv-1+n_t, d_inner, n_s], c [d_conv, d_inner] ->
// dst [d_inner, n_t, n_s], dst[i, t, s] = Σ_{j<d_conv} sx[t+j, i, s]·c[j, i]
// (float32 sum in order j = 0, 1, ...).
//
// ssm_scan(s, x, dt, A, B, C, ids) with K snapshot slots:
//
// 	s   [d_state, head_dim, n_head, >= n_seqs]  input states; sequence q starts from s[..., ids[q]]
// 	x   [head_dim, n_head, n_t, n_seqs]
// 	dt  [n_head, n_t, n_seqs]
// 	A   [d_state, n_head] (Mamba-1) or [1, n_head] (Mamba-2)
// 	B,C [d_state, n_group, n_t, n_seqs]          head h uses group h / (n_head/n_group)
// 	ids [n_seqs] i32
//
// Per token: dt' = softplus(dt) (x for x > 20, else log1p(exp(x))),
// state = state·exp(dt'·A) + B·x·dt', y = Σ_state state·C. The result is
// 1-D: y in x's layout (nelements(x) values), then K state blocks of
// d_state·head_dim·n_head·n_seqs values; slot k holds the state after
// token n_t-1-k (slot 0 = the final state). Slots k >= n_t are not
// written (ggml leaves them to the caller; Compute's fresh result has
// zeros there). K = 1 is plain ggml_ssm_scan. The K slots follow ggml's
// rollback change (66d09fae), by analogy with gated_delta_net: confirm
// against a CPU run before relying on K > 1.

func inferSSMConv(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	sx, c := srcs[0], srcs[1]
	var zero [MaxDims]int64
	if err := wantTypes(OpSSMConv, "sx", sx.Type, F32); err != nil {
		return 0, zero, err
	}
	if err := wantTypes(OpSSMConv, "c", c.Type, F32); err != nil {
		return 0, zero, err
	}
	switch {
	case sx.Ne[3] != 1:
		return 0, zero, ShapeErr(OpSSMConv, "sx %s is not 3-D", sx.ShapeString())
	case c.Ne[2] != 1 || c.Ne[3] != 1:
		return 0, zero, ShapeErr(OpSSMConv, "c %s is not a matrix", c.ShapeString())
	case sx.Ne[1] != c.Ne[1]:
		return 0, zero, ShapeErr(OpSSMConv, "sx.ne1 = %d != c.ne1 = %d (d_inner)", sx.Ne[1], c.Ne[1])
	case sx.Ne[0]-c.Ne[0]+1 < 0:
		return 0, zero, ShapeErr(OpSSMConv, "sx.ne0 = %d is shorter than the kernel d_conv - 1 = %d", sx.Ne[0], c.Ne[0]-1)
	}
	return F32, [MaxDims]int64{c.Ne[1], sx.Ne[0] - c.Ne[0] + 1, sx.Ne[2], 1}, nil
}

// ssmScanDims are the sizes of an ssm_scan.
type ssmScanDims struct {
	DState, HeadDim, NHead, NGroup, NTok, NSeqs int64
}

func SSMScanShape(srcs []*Tensor) (ssmScanDims, error) {
	s, x, dt, a, b, c, ids := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5], srcs[6]
	var d ssmScanDims
	for i, t := range srcs[:6] {
		if err := wantTypes(OpSSMScan, []string{"s", "x", "dt", "A", "B", "C"}[i], t.Type, F32); err != nil {
			return d, err
		}
	}
	if err := wantTypes(OpSSMScan, "ids", ids.Type, I32); err != nil {
		return d, err
	}
	d = ssmScanDims{DState: s.Ne[0], HeadDim: x.Ne[0], NHead: x.Ne[1], NGroup: b.Ne[1], NTok: x.Ne[2], NSeqs: x.Ne[3]}
	switch {
	case dt.Ne != [MaxDims]int64{d.NHead, d.NTok, d.NSeqs, 1}:
		return d, ShapeErr(OpSSMScan, "dt %s, want [n_head, n_t, n_seqs] = [%d, %d, %d, 1]", dt.ShapeString(), d.NHead, d.NTok, d.NSeqs)
	case s.Ne[1] != d.HeadDim || s.Ne[2] != d.NHead:
		return d, ShapeErr(OpSSMScan, "s %s, want [d_state, head_dim = %d, n_head = %d, >= n_seqs]", s.ShapeString(), d.HeadDim, d.NHead)
	case b.Ne != c.Ne:
		return d, ShapeErr(OpSSMScan, "B %s and C %s differ", b.ShapeString(), c.ShapeString())
	case b.Ne[0] != d.DState || b.Ne[2] != d.NTok || b.Ne[3] != d.NSeqs:
		return d, ShapeErr(OpSSMScan, "B %s, want [d_state = %d, n_group, n_t = %d, n_seqs = %d]", b.ShapeString(), d.DState, d.NTok, d.NSeqs)
	case d.NGroup == 0 || d.NHead%d.NGroup != 0:
		return d, ShapeErr(OpSSMScan, "n_head = %d is not a multiple of n_group = %d", d.NHead, d.NGroup)
	case a.Ne[1] != d.NHead || a.Ne[2] != 1 || a.Ne[3] != 1 || (a.Ne[0] != 1 && a.Ne[0] != d.DState):
		return d, ShapeErr(OpSSMScan, "A %s, want [d_state = %d or 1, n_head = %d]", a.ShapeString(), d.DState, d.NHead)
	case ids.Ne != [MaxDims]int64{d.NSeqs, 1, 1, 1}:
		return d, ShapeErr(OpSSMScan, "ids %s, want [n_seqs = %d]", ids.ShapeString(), d.NSeqs)
	}
	return d, nil
}

func inferSSMScan(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	var zero [MaxDims]int64
	d, err := SSMScanShape(srcs)
	if err != nil {
		return 0, zero, err
	}
	k := p.Int("K")
	if k < 1 {
		return 0, zero, &ParamError{Op: OpSSMScan, Param: "K", Msg: fmt.Sprintf("%d, want >= 1 snapshot slot", k)}
	}
	n := srcs[1].NElements() + d.DState*d.HeadDim*d.NHead*d.NSeqs*k
	return F32, [MaxDims]int64{n, 1, 1, 1}, nil
}

// --- gdn (its math: refmath/gdn.go) ---
// gated_delta_net: the gated delta rule of Qwen3-Next / Kimi linear
// attention (ggml_gated_delta_net(q, k, v, g, beta, state, K)).
//
// 	q [S_v, H_q, T, n_seqs_q], k [S_v, H_k, T, n_seqs_k]
// 	v [S_v, H, T, n_seqs]
// 	g [1 or S_v, H, T, n_seqs]   (S_v: per-channel gate, "KDA")
// 	beta [1, H, T, n_seqs]
// 	state [S_v, S_v, H, n_seqs]  initial state
//
// Value head h reads q head h % H_q and k head h % H_k (tiled), and
// sequence n reads q/k sequence n / (n_seqs/n_seqs_q). The state is kept
// transposed as on the CPU: M[j][i] = S[i][j] is element (i, j, h, n) of
// state. Per token, in float32:
//
// 	M[j][i] *= exp(g[i])  (KDA) or exp(g[0])
// 	delta[j] = (v[j] - M[j]·k) · beta
// 	M[j][i] += k[i]·delta[j]
// 	out[j]   = (M[j]·q) / sqrtf(S_v)
//
// The result is [S_v·H, T·n_seqs + K·S_v·n_seqs]: the output rows (row
// n·T + t, column h·S_v + j), then K state snapshots of S_v·S_v·H·n_seqs
// values in state's layout; slot s holds the state after token T-1-s
// (slot 0 = final). Slots s >= T are not written (ggml leaves them to the
// caller). Dot products use dotF32 (float32 partial sums, like ggml's SIMD
// ggml_vec_dot_f32).

type gdnDims struct {
	SV, H, HQ, HK, T, N, NQ, NK int64
	KDA                         bool
}

func GDNShape(srcs []*Tensor) (gdnDims, error) {
	q, k, v, g, beta, state := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]
	var d gdnDims
	for i, x := range srcs {
		if err := wantTypes(OpGatedDeltaNet, []string{"q", "k", "v", "g", "beta", "state"}[i], x.Type, F32); err != nil {
			return d, err
		}
	}
	d = gdnDims{SV: v.Ne[0], H: v.Ne[1], HQ: q.Ne[1], HK: k.Ne[1], T: v.Ne[2], N: v.Ne[3], NQ: q.Ne[3], NK: k.Ne[3], KDA: g.Ne[0] == v.Ne[0]}
	switch {
	case q.Ne[0] != d.SV || k.Ne[0] != d.SV:
		return d, ShapeErr(OpGatedDeltaNet, "q.ne0 = %d and k.ne0 = %d, want S_v = v.ne0 = %d", q.Ne[0], k.Ne[0], d.SV)
	case q.Ne[2] != d.T || k.Ne[2] != d.T:
		return d, ShapeErr(OpGatedDeltaNet, "q.ne2 = %d and k.ne2 = %d, want n_tokens = v.ne2 = %d", q.Ne[2], k.Ne[2], d.T)
	case d.HQ == 0 || d.HK == 0:
		return d, ShapeErr(OpGatedDeltaNet, "q or k has no heads")
	case d.NQ == 0 || d.NK == 0 || d.N%d.NQ != 0 || d.N%d.NK != 0:
		return d, ShapeErr(OpGatedDeltaNet, "n_seqs = %d is not a multiple of q.ne3 = %d and k.ne3 = %d", d.N, d.NQ, d.NK)
	case g.Ne[0] != 1 && g.Ne[0] != d.SV:
		return d, ShapeErr(OpGatedDeltaNet, "g.ne0 = %d, want 1 or S_v = %d", g.Ne[0], d.SV)
	case g.Ne[1] != d.H || g.Ne[2] != d.T || g.Ne[3] != d.N:
		return d, ShapeErr(OpGatedDeltaNet, "g %s, want [1 or S_v, H = %d, T = %d, n_seqs = %d]", g.ShapeString(), d.H, d.T, d.N)
	case beta.Ne != [MaxDims]int64{1, d.H, d.T, d.N}:
		return d, ShapeErr(OpGatedDeltaNet, "beta %s, want [1, %d, %d, %d]", beta.ShapeString(), d.H, d.T, d.N)
	case state.Ne != [MaxDims]int64{d.SV, d.SV, d.H, d.N}:
		return d, ShapeErr(OpGatedDeltaNet, "state %s, want [S_v, S_v, H, n_seqs] = [%d, %d, %d, %d]", state.ShapeString(), d.SV, d.SV, d.H, d.N)
	}
	return d, nil
}

func inferGatedDeltaNet(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	d, err := GDNShape(srcs)
	if err != nil {
		return 0, [MaxDims]int64{}, err
	}
	k := p.Int("K")
	if k < 1 {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpGatedDeltaNet, Param: "K", Msg: fmt.Sprintf("%d, want >= 1 snapshot slot", k)}
	}
	return F32, [MaxDims]int64{d.SV * d.H, d.T*d.N + k*d.SV*d.N, 1, 1}, nil
}

// --- accops (its math: refmath/accops.go) ---
// acc, add_id, arange, timestep_embedding and out_prod, as ggml's CPU
// computes them (ggml-cpu/ops.cpp), plus the shapes of the model-specific
// ops et has no host math for (gated_linear_attn, lightning_indexer, the
// DeepSeek-V4 hyper-connection ops).

func inferAcc(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpAcc, "a", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantTypes(OpAcc, "b", b.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if b.NElements() > a.NElements() {
		return 0, a.Ne, ShapeErr(OpAcc, "b %s has more elements than a %s", b.ShapeString(), a.ShapeString())
	}
	nb := AccStrides(a, p)
	last := p.Int("offset")
	for d := 0; d < MaxDims; d++ {
		if nb[d] < 0 {
			return 0, a.Ne, &ParamError{Op: OpAcc, Param: fmt.Sprintf("nb%d", d), Msg: "negative stride"}
		}
		last += (b.Ne[d] - 1) * nb[d]
	}
	if p.Int("offset") < 0 || last+4 > int64(a.NBytes()) {
		return 0, a.Ne, ShapeErr(OpAcc, "the view of b's shape %s at offset %d with strides %v ends at byte %d, past a's %d bytes", b.ShapeString(), p.Int("offset"), nb, last+4, a.NBytes())
	}
	return F32, a.Ne, nil
}

// AccStrides are the byte strides of the view acc adds b into: 4, then
// nb1..nb3 (0 means a's own stride).
func AccStrides(a *Tensor, p Params) [MaxDims]int64 {
	full := ContiguousStrides(a.Type, a.Ne)
	nb := [MaxDims]int64{int64(full[0])}
	for d, k := range []string{"nb1", "nb2", "nb3"} {
		nb[d+1] = p.Int(k)
		if nb[d+1] == 0 {
			nb[d+1] = int64(full[d+1])
		}
	}
	return nb
}

func inferAddID(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b, ids := srcs[0], srcs[1], srcs[2]
	if err := wantTypes(OpAddID, "a", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantTypes(OpAddID, "b", b.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if ids.Type != I32 {
		return 0, a.Ne, ShapeErr(OpAddID, "ids is %s, want i32", ids.Type)
	}
	if a.Ne[0] != b.Ne[0] || a.Ne[1] != ids.Ne[0] || a.Ne[2] != ids.Ne[1] {
		return 0, a.Ne, ShapeErr(OpAddID, "a %s, b %s, ids %s: want a.ne0 = b.ne0, a.ne1 = ids.ne0, a.ne2 = ids.ne1", a.ShapeString(), b.ShapeString(), ids.ShapeString())
	}
	return F32, a.Ne, nil
}

// arangeSteps is ggml_arange's element count, (int64) ceilf((stop -
// start) / step) in float32.
func arangeSteps(p Params) int64 {
	start, stop, step := p.F32("start"), p.F32("stop"), p.F32("step")
	return int64(float32(math.Ceil(float64((stop - start) / step))))
}

func inferArange(_ []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	if !(p.F32("stop") > p.F32("start")) {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpArange, Param: "stop", Msg: "must be greater than start"}
	}
	n := arangeSteps(p)
	if n <= 0 || n > 1<<31 {
		return 0, [MaxDims]int64{}, &ParamError{Op: OpArange, Param: "step", Msg: fmt.Sprintf("gives %d elements", n)}
	}
	return F32, [MaxDims]int64{n, 1, 1, 1}, nil
}

func inferTimestepEmbedding(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpTimestepEmbedding, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	// The timesteps are x's first row: a row of an empty x (a zero
	// among ne1..ne3) has no values to read.
	if x.Ne[0] > 0 && x.NElements() == 0 {
		return 0, x.Ne, ShapeErr(OpTimestepEmbedding, "x %s has no elements, but ne0 = %d timesteps", x.ShapeString(), x.Ne[0])
	}
	dim := p.Int("dim")
	if dim <= 0 {
		return 0, x.Ne, &ParamError{Op: OpTimestepEmbedding, Param: "dim", Msg: "must be positive"}
	}
	if p.Int("max_period") <= 0 {
		return 0, x.Ne, &ParamError{Op: OpTimestepEmbedding, Param: "max_period", Msg: "must be positive"}
	}
	return F32, [MaxDims]int64{dim, x.Ne[0], 1, 1}, nil
}

func inferOutProd(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if !isFloatType(a.Type) || !isFloatType(b.Type) {
		return 0, a.Ne, ShapeErr(OpOutProd, "a, b are %s, %s, want float or quantized types", a.Type, b.Type)
	}
	if a.Ne[1] != b.Ne[1] {
		return 0, a.Ne, ShapeErr(OpOutProd, "a.ne1 = %d != b.ne1 = %d (the shared dimension k)", a.Ne[1], b.Ne[1])
	}
	for d := 2; d < MaxDims; d++ {
		if a.Ne[d] == 0 {
			return 0, a.Ne, ShapeErr(OpOutProd, "a.ne%d = 0: b cannot be a broadcast of it", d)
		}
		if b.Ne[d]%a.Ne[d] != 0 {
			return 0, a.Ne, ShapeErr(OpOutProd, "b.ne%d = %d is not a multiple of a.ne%d = %d", d, b.Ne[d], d, a.Ne[d])
		}
	}
	if a.Nb[0] > a.Nb[1] {
		return 0, a.Ne, ShapeErr(OpOutProd, "a is transposed (nb0 > nb1)")
	}
	return F32, [MaxDims]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}, nil
}

// flopsLightningIndexer is test_lightning_indexer's op_flops: ((2·hsk +
// 2)·nh + 1)·kv·nb·ns.
func flopsLightningIndexer(_ *Tensor, srcs []*Tensor, _ Params) int64 {
	q, k := srcs[0], srcs[1]
	return ((2*q.Ne[0]+2)*q.Ne[1] + 1) * k.Ne[2] * q.Ne[2] * q.Ne[3]
}

func inferGatedLinearAttn(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	k, v, q, g, s := srcs[0], srcs[1], srcs[2], srcs[3], srcs[4]
	S, H, T := k.Ne[0], k.Ne[1], k.Ne[2]
	for i, x := range []*Tensor{v, q, g} {
		if x.Ne[0] != S || x.Ne[1] != H || x.Ne[2] != T {
			return 0, k.Ne, ShapeErr(OpGatedLinearAttn, "%s %s differs from k %s", []string{"v", "q", "g"}[i], x.ShapeString(), k.ShapeString())
		}
	}
	// The op reads S·H·T values of each (ne3 is not read); an empty one
	// (ne3 = 0) has none of them.
	for i, x := range []*Tensor{k, v, q, g} {
		if x.Ne[3] == 0 && S*H*T > 0 {
			return 0, k.Ne, ShapeErr(OpGatedLinearAttn, "%s %s is empty (ne3 = 0) but the op reads its S·H·T = %d values", []string{"k", "v", "q", "g"}[i], x.ShapeString(), S*H*T)
		}
	}
	nSeqs := s.Ne[1]
	if nSeqs == 0 {
		return 0, k.Ne, ShapeErr(OpGatedLinearAttn, "state %s has no sequences (ne1 = 0)", s.ShapeString())
	}
	if s.NElements() != S*S*H*nSeqs {
		return 0, k.Ne, ShapeErr(OpGatedLinearAttn, "state %s does not hold S·S·H·n_seqs = %d values", s.ShapeString(), S*S*H*nSeqs)
	}
	return F32, [MaxDims]int64{S * H, T + S*nSeqs, 1, 1}, nil
}

func inferLightningIndexer(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	q, k, w, m := srcs[0], srcs[1], srcs[2], srcs[3]
	switch {
	case q.Type != F32 || w.Type != F32 || m.Type != F16:
		return 0, q.Ne, ShapeErr(OpLightningIndexer, "q, weights, mask are %s, %s, %s, want f32, f32, f16", q.Type, w.Type, m.Type)
	case q.Ne[0] != k.Ne[0] || m.Ne[0] != k.Ne[2] || q.Ne[1] != w.Ne[0] || k.Ne[1] != 1 || m.Ne[1] != q.Ne[2] ||
		q.Ne[2] != w.Ne[1] || w.Ne[2] != 1 || m.Ne[2] != 1 || q.Ne[3] != k.Ne[3] || k.Ne[3] != w.Ne[3] || m.Ne[3] == 0 || w.Ne[3]%m.Ne[3] != 0:
		return 0, q.Ne, ShapeErr(OpLightningIndexer, "q %s, k %s, weights %s, mask %s do not fit together (ggml_lightning_indexer)", q.ShapeString(), k.ShapeString(), w.ShapeString(), m.ShapeString())
	}
	return F32, [MaxDims]int64{k.Ne[2], q.Ne[2], 1, q.Ne[3]}, nil
}

func allF32(op Op, names []string, srcs []*Tensor) error {
	for i, s := range srcs {
		if s.Type != F32 {
			return ShapeErr(op, "%s is %s, want f32", names[i], s.Type)
		}
	}
	return nil
}

func inferDSV4HCComb(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	mixes, scale, base := srcs[0], srcs[1], srcs[2]
	if err := allF32(OpDSV4HCComb, []string{"mixes", "scale", "base"}, srcs); err != nil {
		return 0, mixes.Ne, err
	}
	const hc = 4
	if mixes.Ne[0] != (2+hc)*hc || mixes.Ne[2] != 1 || mixes.Ne[3] != 1 || scale.Ne[0] < 3 || scale.NElements() != scale.Ne[0] || base.Ne[0] != mixes.Ne[0] || base.NElements() != base.Ne[0] {
		return 0, mixes.Ne, ShapeErr(OpDSV4HCComb, "mixes %s, scale %s, base %s: want [24, n_tokens], [>= 3], [24]", mixes.ShapeString(), scale.ShapeString(), base.ShapeString())
	}
	if p.Int("n_iter") <= 0 {
		return 0, mixes.Ne, &ParamError{Op: OpDSV4HCComb, Param: "n_iter", Msg: "must be positive"}
	}
	return F32, [MaxDims]int64{hc, hc, mixes.Ne[1], 1}, nil
}

func inferDSV4HCPre(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x, w := srcs[0], srcs[1]
	if err := allF32(OpDSV4HCPre, []string{"x", "weights"}, srcs); err != nil {
		return 0, x.Ne, err
	}
	if x.Ne[3] != 1 || w.Ne[0] != x.Ne[1] || w.Ne[1] != x.Ne[2] || w.Ne[2] != 1 || w.Ne[3] != 1 {
		return 0, x.Ne, ShapeErr(OpDSV4HCPre, "x %s, weights %s: want [n_embd, hc, n_tokens], [hc, n_tokens]", x.ShapeString(), w.ShapeString())
	}
	return F32, [MaxDims]int64{x.Ne[0], x.Ne[2], 1, 1}, nil
}

func inferDSV4HCPost(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x, res, post, comb := srcs[0], srcs[1], srcs[2], srcs[3]
	if err := allF32(OpDSV4HCPost, []string{"x", "residual", "post", "comb"}, srcs); err != nil {
		return 0, x.Ne, err
	}
	nE, nT, hc := x.Ne[0], x.Ne[1], res.Ne[1]
	if x.Ne[2] != 1 || x.Ne[3] != 1 || res.Ne[0] != nE || res.Ne[2] != nT || res.Ne[3] != 1 ||
		post.Ne != [MaxDims]int64{hc, nT, 1, 1} || comb.Ne != [MaxDims]int64{hc, hc, nT, 1} {
		return 0, x.Ne, ShapeErr(OpDSV4HCPost, "x %s, residual %s, post %s, comb %s: want [n_embd, n_tokens], [n_embd, hc, n_tokens], [hc, n_tokens], [hc, hc, n_tokens]",
			x.ShapeString(), res.ShapeString(), post.ShapeString(), comb.ShapeString())
	}
	return F32, [MaxDims]int64{nE, hc, nT, 1}, nil
}

// --- backward (its math: refmath/backward.go) ---
// The backward (gradient) ops of ggml's training graphs and the masks
// around them, as ggml's CPU computes them (ggml-cpu/ops.cpp). f32 only,
// as on the CPU, unless said otherwise.

func wantSameShape(op Op, what string, x *Tensor, ref *Tensor, refName string) error {
	if x.Ne != ref.Ne {
		return ShapeErr(op, "%s %s differs from %s %s", what, x.ShapeString(), refName, ref.ShapeString())
	}
	return nil
}

func inferRepeatBack(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpRepeatBack, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	ne := [MaxDims]int64{1, 1, 1, 1}
	copy(ne[:], p.Ints("ne"))
	for d := range ne {
		if ne[d] <= 0 || x.Ne[d]%ne[d] != 0 {
			return 0, x.Ne, &ParamError{Op: OpRepeatBack, Param: "ne", Msg: fmt.Sprintf("%v: ne%d = %d does not divide x.ne%d = %d", ne, d, ne[d], d, x.Ne[d])}
		}
	}
	return x.Type, ne, nil
}

func inferGetRowsBack(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	g, rows := srcs[0], srcs[1]
	ne := p.Ints("ne")
	if rows.Type != I32 || rows.Ne[1] != 1 || rows.Ne[2] != 1 || rows.Ne[3] != 1 {
		return 0, g.Ne, ShapeErr(OpGetRowsBack, "rows is %s %s, want an i32 vector", rows.Type, rows.ShapeString())
	}
	if g.Ne[2] != 1 || g.Ne[3] != 1 || g.Ne[1] < rows.Ne[0] {
		return 0, g.Ne, ShapeErr(OpGetRowsBack, "grad %s is not a matrix with a row per index (%d)", g.ShapeString(), rows.Ne[0])
	}
	if len(ne) != 2 || ne[0] != g.Ne[0] || ne[1] <= 0 {
		return 0, g.Ne, &ParamError{Op: OpGetRowsBack, Param: "ne", Msg: fmt.Sprintf("%v: want [grad.ne0 = %d, rows > 0]", ne, g.Ne[0])}
	}
	return F32, [MaxDims]int64{ne[0], ne[1], 1, 1}, nil
}

func inferRMSNormBack(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	dz, x := srcs[0], srcs[1]
	if err := wantTypes(OpRMSNormBack, "dz", dz.Type, F32); err != nil {
		return 0, dz.Ne, err
	}
	if err := wantTypes(OpRMSNormBack, "x", x.Type, F32); err != nil {
		return 0, dz.Ne, err
	}
	if err := wantSameShape(OpRMSNormBack, "x", x, dz, "dz"); err != nil {
		return 0, dz.Ne, err
	}
	return F32, dz.Ne, nil
}

func inferSoftMaxBack(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	dy, y := srcs[0], srcs[1]
	if err := wantTypes(OpSoftMaxBack, "dy", dy.Type, F32); err != nil {
		return 0, dy.Ne, err
	}
	if err := wantTypes(OpSoftMaxBack, "y", y.Type, F32); err != nil {
		return 0, dy.Ne, err
	}
	if err := wantSameShape(OpSoftMaxBack, "y", y, dy, "dy"); err != nil {
		return 0, dy.Ne, err
	}
	return F32, dy.Ne, nil
}

func inferDiagMaskInf(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	x := srcs[0]
	if err := wantTypes(OpDiagMaskInf, "x", x.Type, F32); err != nil {
		return 0, x.Ne, err
	}
	return F32, x.Ne, nil
}

func inferRopeBack(srcs []*Tensor, p Params) (Type, [MaxDims]int64, error) {
	x, pos := srcs[0], srcs[1]
	if err := wantTypes(OpRopeBack, "dy", x.Type, F32, F16); err != nil {
		return 0, x.Ne, err
	}
	if pos.Type != I32 || pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1 {
		return 0, x.Ne, ShapeErr(OpRopeBack, "pos is %s %s, want an i32 vector", pos.Type, pos.ShapeString())
	}
	mode := p.Int("mode")
	npos := x.Ne[2]
	if mode&8 != 0 {
		npos *= 4
	}
	if pos.Ne[0] != npos {
		return 0, x.Ne, ShapeErr(OpRopeBack, "pos has %d entries, want %d (dy.ne2%s)", pos.Ne[0], npos, map[bool]string{true: "·4 for mrope", false: ""}[mode&8 != 0])
	}
	return x.Type, x.Ne, nil
}

func inferCrossEntropyLoss(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	a, b := srcs[0], srcs[1]
	if err := wantTypes(OpCrossEntropyLoss, "logits", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantSameShape(OpCrossEntropyLoss, "labels", b, a, "logits"); err != nil {
		return 0, a.Ne, err
	}
	return a.Type, [MaxDims]int64{1, 1, 1, 1}, nil
}

func inferCrossEntropyLossBack(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
	g, a, b := srcs[0], srcs[1], srcs[2]
	if g.NElements() != 1 {
		return 0, a.Ne, ShapeErr(OpCrossEntropyLossBack, "grad %s is not a scalar", g.ShapeString())
	}
	if err := wantTypes(OpCrossEntropyLossBack, "logits", a.Type, F32); err != nil {
		return 0, a.Ne, err
	}
	if err := wantSameShape(OpCrossEntropyLossBack, "labels", b, a, "logits"); err != nil {
		return 0, a.Ne, err
	}
	return a.Type, a.Ne, nil
}

// inferOptStep checks an optimizer step: every source but the last has
// a's shape, the last is f32 with nparams elements; the result is a.
func inferOptStep(op Op, nparams int64) InferFunc {
	return func(srcs []*Tensor, _ Params) (Type, [MaxDims]int64, error) {
		a := srcs[0]
		if err := wantTypes(op, "a", a.Type, F32); err != nil {
			return 0, a.Ne, err
		}
		last := len(srcs) - 1
		for i := 1; i < last; i++ {
			if err := wantSameShape(op, fmt.Sprintf("source %d", i), srcs[i], a, "a"); err != nil {
				return 0, a.Ne, err
			}
		}
		if pr := srcs[last]; pr.Type != F32 || pr.NElements() != nparams {
			return 0, a.Ne, ShapeErr(op, "params is %s %s, want f32 with %d elements", pr.Type, pr.ShapeString(), nparams)
		}
		return a.Type, a.Ne, nil
	}
}

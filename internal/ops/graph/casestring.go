package graph

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Case strings are test-backend-ops' "OP(vars)" names
// (reference/ggml-et-backend.md §6), e.g.
//
//	MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1)
//
// ParseCaseString turns one into a Case that builds the same ggml graph as
// the test-backend-ops test of that name, with et's inits (deterministic
// given the seed) instead of random_device. Keys and their meaning follow
// the test-backend-ops test classes (test_mul_mat, test_bin_bcast,
// test_rms_norm, test_soft_max, test_rope, test_unary, test_glu,
// test_get_rows, test_set_rows, test_cpy, test_cont, test_scale,
// test_norm, test_flash_attn_ext, and the classes casestring_more.go
// lists).
//
// Defaults for omitted keys: shape keys (m, n, k, ne, ne_a, ...) take the
// test class's constructor default; batch and broadcast repeat keys (bs,
// nr, nr23) default to 1, so that a short string such as
// MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096) is one matrix-vector
// product and not the constructor's 10x10 batch of 2x2 repeats; flags (v,
// inplace, mask, ...) default to off. test-backend-ops always prints every
// key, so strings copied from its output are unaffected.
//
// inplace=1 makes the op's result a view of its first source (ggml's
// *_inplace op): the node is InPlace, and et launches it with the same
// aliasing ggml-et does (dst.data == src0.data). Keys et cannot express in a
// case file (o > 1, src_overlap, perm1, ...) are accepted only at their
// default value, otherwise they are an error.

// ParseCaseString parses a test-backend-ops case string into a validated
// Case. Errors name the string and say which key is wrong.
func ParseCaseString(s string) (*Case, error) {
	s = strings.TrimSpace(s)
	name, body, err := splitCaseString(s)
	if err != nil {
		return nil, &Error{File: s, Msg: err.Error()}
	}
	b := &csBuilder{file: s, kv: map[string]string{}, used: map[string]bool{}}
	if err := b.parseVars(body); err != nil {
		return nil, &Error{File: s, Msg: err.Error()}
	}
	b.c = &Case{Name: s, File: s, OpDesc: name, Vars: body}
	build, ok := caseBuilders[name]
	switch {
	case ok:
	case slices.Contains(ops.UnaryOps, strings.ToLower(name)):
		build = func(b *csBuilder) { buildUnary(b, strings.ToLower(name)) }
	case slices.Contains(ops.GLUOps, strings.ToLower(name)):
		build = func(b *csBuilder) { buildGLU(b, strings.ToLower(name)) }
	default:
		return nil, &Error{File: s, Msg: fmt.Sprintf("unknown op %q in case string (want one of %s)", name, strings.Join(CaseStringOps(), ", "))}
	}
	build(b)
	if b.err != nil {
		return nil, &Error{File: s, Msg: name + ": " + b.err.Error()}
	}
	var unused []string
	for k := range b.kv {
		if !b.used[k] {
			unused = append(unused, k)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		known := make([]string, 0, len(b.used))
		for k := range b.used {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, &Error{File: s, Msg: fmt.Sprintf("%s: unknown key %q (want %s)", name, unused[0], strings.Join(known, ", "))}
	}
	if err := validate(b.c, b.raw, nil); err != nil {
		return nil, err
	}
	return b.c, nil
}

// CaseStringOps lists the op names ParseCaseString accepts, sorted.
func CaseStringOps() []string {
	var out []string
	for k := range caseBuilders {
		out = append(out, k)
	}
	for _, u := range ops.UnaryOps {
		out = append(out, strings.ToUpper(u))
	}
	for _, g := range ops.GLUOps {
		out = append(out, strings.ToUpper(g))
	}
	sort.Strings(out)
	return out
}

var caseBuilders map[string]func(*csBuilder)

func init() {
	caseBuilders = map[string]func(*csBuilder){
		"MUL_MAT":        buildMulMat,
		"ADD":            func(b *csBuilder) { buildBinary(b, "add") },
		"SUB":            func(b *csBuilder) { buildBinary(b, "sub") },
		"MUL":            func(b *csBuilder) { buildBinary(b, "mul") },
		"RMS_NORM":       func(b *csBuilder) { buildNorm(b, "rms_norm") },
		"NORM":           func(b *csBuilder) { buildNorm(b, "norm") },
		"SCALE":          buildScale,
		"SOFT_MAX":       buildSoftMax,
		"ROPE":           buildRope,
		"GET_ROWS":       buildGetRows,
		"SET_ROWS":       buildSetRows,
		"CPY":            buildCpy,
		"CONT":           buildCont,
		"FLASH_ATTN_EXT": buildFlashAttn,

		"SQR":             buildSqr,
		"SUM_ROWS":        buildSumRows,
		"MEAN":            buildMean,
		"CLAMP":           buildClamp,
		"CUMSUM":          buildCumsum,
		"MUL_MAT_ID":      buildMulMatID,
		"L2_NORM":         buildL2Norm,
		"GROUP_NORM":      buildGroupNorm,
		"IM2COL":          buildIm2col,
		"CONV_2D":         buildConv2D,
		"CONCAT":          buildConcat,
		"REPEAT":          buildRepeat,
		"PAD":             buildPad,
		"FILL":            buildFill,
		"DIAG":            buildDiag,
		"TRI":             buildTri,
		"SOLVE_TRI":       buildSolveTri,
		"SET":             buildSet,
		"SSM_CONV":        buildSSMConv,
		"SSM_SCAN":        buildSSMScan,
		"RWKV_WKV6":       func(b *csBuilder) { buildRWKV(b, ops.OpRWKVWKV6) },
		"RWKV_WKV7":       func(b *csBuilder) { buildRWKV(b, ops.OpRWKVWKV7) },
		"GATED_DELTA_NET": buildGatedDeltaNet,
	}
	maps.Copy(caseBuilders, hostCaseBuilders)
}

// splitCaseString splits "NAME(vars)" (or a bare "NAME").
func splitCaseString(s string) (name, body string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("empty case string")
	}
	i := strings.IndexByte(s, '(')
	if i < 0 {
		name = s
	} else {
		if !strings.HasSuffix(s, ")") {
			return "", "", fmt.Errorf("missing ')' at the end")
		}
		name, body = s[:i], s[i+1:len(s)-1]
	}
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return "", "", fmt.Errorf("bad op name %q: want OP(key=value,...)", name)
		}
	}
	if name == "" {
		return "", "", fmt.Errorf("missing op name: want OP(key=value,...)")
	}
	return strings.ToUpper(name), body, nil
}

// csBuilder holds the parsed key=value pairs of a case string and builds
// the case; the first error sticks.
type csBuilder struct {
	file string
	kv   map[string]string
	used map[string]bool
	c    *Case
	raw  []map[string]any
	err  error
	// inplace (the inplace key) makes the op nodes that follow InPlace.
	inplace bool
}

// parseVars splits "k=v,k=[a,b],flag" at top-level commas. A bare word
// (test-backend-ops appends ",split" to split GLU cases) is stored as
// flag=1.
func (b *csBuilder) parseVars(body string) error {
	depth := 0
	start := 0
	var items []string
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '[':
			depth++
			if depth > 1 {
				return fmt.Errorf("nested '[' at offset %d", i)
			}
		case ']':
			depth--
			if depth < 0 {
				return fmt.Errorf("unbalanced ']' at offset %d", i)
			}
		case ',':
			if depth == 0 {
				items = append(items, body[start:i])
				start = i + 1
			}
		case '(', ')':
			return fmt.Errorf("unexpected %q at offset %d", body[i], i)
		}
	}
	if depth != 0 {
		return fmt.Errorf("unbalanced '['")
	}
	items = append(items, body[start:])
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			if len(items) == 1 {
				break
			}
			return fmt.Errorf("empty item in %q", body)
		}
		k, v, ok := strings.Cut(it, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			v = "1"
		}
		if k == "" {
			return fmt.Errorf("missing key in %q", it)
		}
		if _, dup := b.kv[k]; dup {
			return fmt.Errorf("duplicate key %q", k)
		}
		b.kv[k] = v
	}
	return nil
}

func (b *csBuilder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

func (b *csBuilder) get(key string) (string, bool) {
	b.used[key] = true
	v, ok := b.kv[key]
	return v, ok
}

func (b *csBuilder) typ(key string, def ops.Type) ops.Type {
	v, ok := b.get(key)
	if !ok {
		return def
	}
	t, err := ops.ParseType(v)
	if err != nil {
		b.fail("%s: %v", key, err)
	}
	return t
}

func (b *csBuilder) int(key string, def int64) int64 {
	v, ok := b.get(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		b.fail("%s: want an integer, got %q", key, v)
	}
	return n
}

// pos reads a positive size.
func (b *csBuilder) pos(key string, def int64) int64 {
	n := b.int(key, def)
	if n <= 0 {
		b.fail("%s: want a positive size, got %d", key, n)
	}
	return n
}

func (b *csBuilder) float(key string, def float64) float64 {
	v, ok := b.get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		b.fail("%s: want a finite number, got %q", key, v)
	}
	return f
}

func (b *csBuilder) bool(key string) bool {
	v, ok := b.get(key)
	if !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "0", "false":
		return false
	case "1", "true":
		return true
	}
	b.fail("%s: want 0 or 1, got %q", key, v)
	return false
}

// ints reads a list "[a,b,...]" of exactly n integers.
func (b *csBuilder) ints(key string, def ...int64) []int64 {
	v, ok := b.get(key)
	if !ok {
		return append([]int64(nil), def...)
	}
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		b.fail("%s: want a list [%s], got %q", key, placeholder(len(def)), v)
		return append([]int64(nil), def...)
	}
	parts := strings.Split(v[1:len(v)-1], ",")
	if len(parts) != len(def) {
		b.fail("%s: want %d values, got %q", key, len(def), v)
		return append([]int64(nil), def...)
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			b.fail("%s: want integers, got %q", key, v)
			return append([]int64(nil), def...)
		}
		out[i] = n
	}
	return out
}

// shape reads a list of n positive sizes.
func (b *csBuilder) shape(key string, def ...int64) []int64 {
	ne := b.ints(key, def...)
	for i, d := range ne {
		if d <= 0 {
			b.fail("%s: dim %d is %d, want a positive size", key, i, d)
		}
	}
	return ne
}

func placeholder(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = "n"
	}
	return strings.Join(s, ",")
}

// only accepts a key only at its default value.
func (b *csBuilder) onlyInt(key string, def int64, why string) {
	if n := b.int(key, def); n != def {
		b.fail("%s=%d is not supported: %s", key, n, why)
	}
}

func (b *csBuilder) identityPerm(key string, def []int64) {
	p := b.ints(key, def...)
	for i := range p {
		if p[i] != def[i] {
			b.fail("%s=%v is not supported by et case strings", key, p)
			return
		}
	}
}

func (b *csBuilder) leaf(name string, t ops.Type, ne []int64, init string) string {
	in, err := ParseInit(init)
	if err != nil {
		panic("graph: bad built-in init " + init) // programming error
	}
	b.c.Tensors = append(b.c.Tensors, TensorSpec{Name: name, Type: t, Ne: ne, Init: in})
	return name
}

func (b *csBuilder) node(name string, op ops.Op, params map[string]any, src ...string) string {
	b.c.Nodes = append(b.c.Nodes, Node{Name: name, Op: op, Src: src, InPlace: b.inplace && op != ops.OpView})
	b.raw = append(b.raw, params)
	return name
}

// viewOf adds a view node of shape ne over x (a contiguous tensor of shape
// full and type t), with x's own strides and offset 0: ggml_view_4d(x,
// ne..., x->nb[1], x->nb[2], x->nb[3], 0).
func (b *csBuilder) viewOf(x string, t ops.Type, full, ne []int64) string {
	var fne [ops.MaxDims]int64
	for i := range fne {
		fne[i] = 1
	}
	copy(fne[:], full)
	nb := ops.ContiguousStrides(t, fne)
	ne4 := []int64{1, 1, 1, 1}
	copy(ne4, ne)
	return b.node(x+"_view", ops.OpView, map[string]any{
		"ne": ne4,
		"nb": []int64{int64(nb[1]), int64(nb[2]), int64(nb[3])},
	}, x)
}

const defaultRange = "uniform(-1, 1)"

// MUL_MAT(type_a, type_b, m, n, k, bs=[2], nr=[2], per=[4], k_v, o):
// a is [k, m, bs0, bs1], b is [k, n, bs0*nr0, bs1*nr1]; per != identity
// builds both as permuted tensors and permutes them back; k_v > 0 makes a
// a view of its first k columns of a [k_v, m, ...] tensor.
func buildMulMat(b *csBuilder) {
	ta := b.typ("type_a", ops.F32)
	tb := b.typ("type_b", ops.F32)
	m := b.pos("m", 32)
	n := b.pos("n", 32)
	k := b.pos("k", 32)
	bs := b.shape("bs", 1, 1)
	nr := b.shape("nr", 1, 1)
	per := b.ints("per", 0, 1, 2, 3)
	kv := b.int("k_v", 0)
	b.onlyInt("o", 1, "et compares one output per case string (write a YAML case for MUL_MAT+ADD chains)")
	b.onlyInt("src_overlap", 0, "overlapping sources cannot be expressed in a case file")
	if b.err != nil {
		return
	}
	if kv != 0 && kv < k {
		b.fail("k_v = %d, want 0 or at least k = %d", kv, k)
		return
	}
	neA := []int64{k, m, bs[0], bs[1]}
	neB := []int64{k, n, bs[0] * nr[0], bs[1] * nr[1]}
	identity := per[0] == 0 && per[1] == 1 && per[2] == 2 && per[3] == 3
	if !identity {
		if kv != 0 {
			b.fail("per and k_v together are not supported")
			return
		}
		var seen [4]bool
		for _, p := range per {
			if p < 0 || p > 3 || seen[p] {
				b.fail("per=%v is not a permutation of 0..3", per)
				return
			}
			seen[p] = true
		}
		pa := []int64{neA[per[0]], neA[per[1]], neA[per[2]], neA[per[3]]}
		pb := []int64{neB[per[0]], neB[per[1]], neB[per[2]], neB[per[3]]}
		b.leaf("a", ta, pa, defaultRange)
		b.leaf("b", tb, pb, defaultRange)
		axes := map[string]any{"axes": per}
		a := b.node("a_perm", ops.OpPermute, axes, "a")
		bb := b.node("b_perm", ops.OpPermute, axes, "b")
		b.node("out", ops.OpMulMat, nil, a, bb)
		return
	}
	a := "a"
	if kv != 0 {
		full := []int64{kv, m, bs[0], bs[1]}
		b.leaf("a", ta, full, defaultRange)
		a = b.viewOf("a", ta, full, neA)
	} else {
		b.leaf("a", ta, neA, defaultRange)
	}
	b.leaf("b", tb, neB, defaultRange)
	b.node("out", ops.OpMulMat, nil, a, "b")
}

// ADD/SUB/MUL(type, ne=[4], nr=[4], nf, perm1, src_overlap): a is ne*nr,
// b is ne (repeated over a); nf > 1 chains nf ops with nf different b's,
// as test_bin_bcast does.
func buildBinary(b *csBuilder, op ops.Op) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 1, 1)
	nr := b.shape("nr", 1, 1, 1, 1)
	nf := b.int("nf", 1)
	b.onlyInt("perm1", 0, "et case strings do not permute src1")
	b.onlyInt("src_overlap", 0, "overlapping sources cannot be expressed in a case file")
	if b.err != nil {
		return
	}
	if nf < 1 || nf > 16 {
		b.fail("nf = %d, want 1 to 16", nf)
		return
	}
	neA := make([]int64, 4)
	for i := range neA {
		neA[i] = ne[i] * nr[i]
	}
	cur := b.leaf("a", t, neA, defaultRange)
	for i := int64(0); i < nf; i++ {
		name := "b"
		out := "out"
		if nf > 1 {
			name = fmt.Sprintf("b%d", i)
			if i < nf-1 {
				out = fmt.Sprintf("out%d", i)
			}
		}
		b.leaf(name, t, ne, defaultRange)
		cur = b.node(out, op, nil, cur, name)
	}
}

// RMS_NORM/NORM(type, ne=[4], v, eps, inplace): v views a at
// half its size in every dim (ggml_view_4d(a, ne0/2, ne1/2, ne2/2, ne3/2,
// a->nb[1..3], 0)), as test_rms_norm and test_norm do.
func buildNorm(b *csBuilder, op ops.Op) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 5, 4, 3)
	v := b.bool("v")
	eps := b.float("eps", 1e-6)
	b.inplace = b.bool("inplace")
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	if v {
		half := make([]int64, 4)
		for i := range half {
			half[i] = max(ne[i]/2, 1)
		}
		x = b.viewOf(x, t, ne, half)
	}
	b.node("out", op, map[string]any{"eps": eps}, x)
}

// SCALE(type, ne=[4], scale, bias, inplace).
func buildScale(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 10, 10)
	scale := b.float("scale", 2)
	bias := b.float("bias", 0)
	b.inplace = b.bool("inplace")
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	b.node("out", ops.OpScale, map[string]any{"scale": scale, "bias": bias}, x)
}

// SOFT_MAX(type, ne=[4], mask, sinks, m_prec, nr23=[2], scale, max_bias,
// inplace): a is [ne0, ne1, ne2*nr23_0, ne3*nr23_1]; the mask (type
// m_prec) is ne, broadcast over a's dims 2 and 3; sinks is f32
// [a.ne2].
func buildSoftMax(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 5, 4, 3)
	mask := b.bool("mask")
	sinks := b.bool("sinks")
	mt := b.typ("m_prec", ops.F32)
	nr := b.shape("nr23", 1, 1)
	scale := b.float("scale", 1)
	maxBias := b.float("max_bias", 0)
	b.inplace = b.bool("inplace")
	if b.err != nil {
		return
	}
	if sinks && !mask {
		b.fail("sinks=1 needs mask=1: soft_max sources are [x, mask, sinks]")
		return
	}
	src := []string{b.leaf("a", t, []int64{ne[0], ne[1], ne[2] * nr[0], ne[3] * nr[1]}, defaultRange)}
	if mask {
		src = append(src, b.leaf("mask", mt, ne, defaultRange))
	}
	if sinks {
		src = append(src, b.leaf("sinks", ops.F32, []int64{ne[2] * nr[0]}, defaultRange))
	}
	b.node("out", ops.OpSoftMax, map[string]any{"scale": scale, "max_bias": maxBias}, src...)
}

// ropeModes maps ggml's integer rope modes to the case-format names.
var ropeModes = map[int64]string{0: "normal", 2: "neox", 40: "imrope"}

// ROPE(type, ne_a=[4], n_dims, mode, n_ctx, fs, ef, af, ff, v, inplace):
// positions are i32 [ne_a2] (4*ne_a2 for imrope) drawn from [0, n_ctx);
// ff adds f32 freq_factors [n_dims/2] in [0.9, 1.1]; v views a out of a
// [2*ne0, 4*ne1, 3*ne2, ne3] tensor. freq_base is 10000, beta_fast 32 and
// beta_slow 1 as in test_rope; imrope sections are [n_dims/2, n_dims/4,
// n_dims/4, 0] (et's choice, test_rope's mrope layout).
func buildRope(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 10, 5, 3, 1)
	nDims := b.int("n_dims", 10)
	mode := b.int("mode", 0)
	nCtx := b.pos("n_ctx", 512)
	fs := b.float("fs", 1)
	ef := b.float("ef", 0)
	af := b.float("af", 0)
	ff := b.bool("ff")
	v := b.bool("v")
	b.inplace = b.bool("inplace")
	if b.err != nil {
		return
	}
	modeName, ok := ropeModes[mode]
	if !ok {
		b.fail("mode=%d is not supported (want 0 normal, 2 neox or 40 imrope)", mode)
		return
	}
	x := "a"
	if v {
		full := []int64{2 * ne[0], 4 * ne[1], 3 * ne[2], ne[3]}
		b.leaf("a", t, full, defaultRange)
		x = b.viewOf("a", t, full, ne)
	} else {
		b.leaf("a", t, ne, defaultRange)
	}
	npos := ne[2]
	params := map[string]any{
		"n_dims": nDims, "mode": modeName, "n_ctx_orig": nCtx,
		"freq_base": 10000.0, "freq_scale": fs, "ext_factor": ef, "attn_factor": af,
		"beta_fast": 32.0, "beta_slow": 1.0,
	}
	if modeName == "imrope" {
		npos *= 4
		params["sections"] = []int64{nDims / 2, nDims / 4, nDims / 4, 0}
	}
	src := []string{x, b.leaf("pos", ops.I32, []int64{npos}, fmt.Sprintf("randint(0, %d)", nCtx))}
	if ff {
		src = append(src, b.leaf("freq_factors", ops.F32, []int64{max(nDims/2, 1)}, "uniform(0.9, 1.1)"))
	}
	b.node("out", ops.OpRope, params, src...)
}

// Unary ops, e.g. SILU(type, ne_a=[4], v): v views a out of a
// [3*ne0, ne1, ne2, ne3] tensor. Inputs are uniform in [-150, 150], the
// range test_unary uses.
func buildUnary(b *csBuilder, op string) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 128, 2, 2, 2)
	v := b.bool("v")
	b.inplace = b.bool("inplace")
	if b.err != nil {
		return
	}
	x := "a"
	if v {
		full := []int64{3 * ne[0], ne[1], ne[2], ne[3]}
		b.leaf("a", t, full, "uniform(-150, 150)")
		x = b.viewOf("a", t, full, ne)
	} else {
		b.leaf("a", t, ne, "uniform(-150, 150)")
	}
	b.node("out", ops.OpUnary, map[string]any{"op": op}, x)
}

// GLU ops, e.g. SWIGLU(type, ne_a=[4], v, swapped) on one tensor whose
// halves are gate and value, or SWIGLU(type, ne_a, v, split) on two
// tensors of shape ne_a; SWIGLU_OAI(type, ne_a, v, alpha, limit) is always
// split. v views each input out of a [3*ne0, ...] tensor. Inputs are
// uniform in [-150, 150], the range test_glu uses.
func buildGLU(b *csBuilder, op string) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 128, 2, 2, 2)
	v := b.bool("v")
	params := map[string]any{"op": op}
	split := op == "swiglu_oai"
	if split {
		params["alpha"] = b.float("alpha", 1.702)
		params["limit"] = b.float("limit", 7)
	} else {
		split = b.bool("split")
		if b.bool("swapped") {
			params["swapped"] = true
		}
	}
	if b.err != nil {
		return
	}
	input := func(name string) string {
		if !v {
			return b.leaf(name, t, ne, "uniform(-150, 150)")
		}
		full := []int64{3 * ne[0], ne[1], ne[2], ne[3]}
		b.leaf(name, t, full, "uniform(-150, 150)")
		return b.viewOf(name, t, full, ne)
	}
	src := []string{input("a")}
	if split {
		src = append(src, input("b"))
	}
	b.node("out", ops.OpGLU, params, src...)
}

// GET_ROWS(type, n, m, r, b, v): data is [n, m, b], rows i32 [r, b] in
// [0, m); v takes a [r/2, b] view of the rows.
func buildGetRows(b *csBuilder) {
	t := b.typ("type", ops.F32)
	n := b.pos("n", 10)
	m := b.pos("m", 5)
	r := b.pos("r", 3)
	bb := b.pos("b", 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	data := b.leaf("data", t, []int64{n, m, bb}, defaultRange)
	rows := b.leaf("rows", ops.I32, []int64{r, bb}, fmt.Sprintf("randint(0, %d)", m))
	if v {
		if r < 2 {
			b.fail("v=1 needs r >= 2")
			return
		}
		rows = b.viewOf(rows, ops.I32, []int64{r, bb}, []int64{r / 2, bb})
	}
	b.node("out", ops.OpGetRows, nil, data, rows)
}

// SET_ROWS(type, type_idx, ne=[4], nr23=[2], r, v): dst is [ne0, ne1,
// ne2*nr23_0, ne3*nr23_1] of type, src f32 [ne0, r, same], idx (type_idx)
// [r, ne2, ne3] with distinct rows per index vector, as test_set_rows
// draws them.
func buildSetRows(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ti := b.typ("type_idx", ops.I64)
	ne := b.shape("ne", 16, 5, 1, 1)
	nr := b.shape("nr23", 1, 1)
	r := b.pos("r", 1)
	b.onlyInt("v", 0, "et case strings do not view set_rows sources")
	if b.err != nil {
		return
	}
	if r > ne[1] {
		b.fail("r = %d is more than the %d rows of dst", r, ne[1])
		return
	}
	n2, n3 := ne[2]*nr[0], ne[3]*nr[1]
	dst := b.leaf("dst", t, []int64{ne[0], ne[1], n2, n3}, defaultRange)
	src := b.leaf("src", ops.F32, []int64{ne[0], r, n2, n3}, defaultRange)
	idx := b.leaf("idx", ti, []int64{r, ne[2], ne[3]}, fmt.Sprintf("perm(%d)", ne[1]))
	b.node("out", ops.OpSetRows, nil, dst, src, idx)
}

// CPY(type_src, type_dst, ne=[4], permute_src=[4], permute_dst=[4]): a
// non-zero permute_src permutes the source first (as test_cpy does);
// permute_dst must stay [0,0,0,0] because cpy's destination is always a
// new contiguous tensor in a case file.
func buildCpy(b *csBuilder) {
	ts := b.typ("type_src", ops.F32)
	td := b.typ("type_dst", ops.F32)
	ne := b.shape("ne", 10, 10, 10, 1)
	ps := b.ints("permute_src", 0, 0, 0, 0)
	b.identityPerm("permute_dst", []int64{0, 0, 0, 0})
	b.bool("_src_use_permute")
	b.bool("_dst_use_permute")
	if b.err != nil {
		return
	}
	x := b.leaf("a", ts, ne, defaultRange)
	if ps[0]+ps[1]+ps[2]+ps[3] > 0 {
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": ps}, x)
	}
	b.node("out", ops.OpCpy, map[string]any{"type": td.String()}, x)
}

// CONT(type, ne=[4]): cont of the transpose of a, as test_cont builds it.
func buildCont(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 10, 1)
	b.onlyInt("use_view_slice", 0, "et case strings do not slice cont sources")
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	x = b.node("a_t", ops.OpTranspose, nil, x)
	b.node("out", ops.OpCont, nil, x)
}

// FLASH_ATTN_EXT(hsk, hsv, nh, nr23=[2], kv, nb, mask, sinks, max_bias,
// logit_softcap, prec, type_KV, permute=[4]): q f32 [hsk, nb,
// nh*nr23_0, nr23_1], k (type_KV) [hsk, kv, nh, nr23_1], v (type_KV)
// [hsv, kv, nh, nr23_1], mask f16 [kv, nb, 1, nr23_1] (GGML_KQ_MASK_PAD
// taken as 1, as in current ggml); head sizes are padded to the K/V block
// size; scale = 1/sqrt(hsk), divided by logit_softcap when that is set,
// as test_flash_attn_ext does. prec is accepted and ignored (et's
// reference accumulates in f32). "nr" is accepted as an older spelling of
// a single nr23_0.
func buildFlashAttn(b *csBuilder) {
	hsk := b.pos("hsk", 128)
	hsv := b.pos("hsv", 128)
	nh := b.pos("nh", 32)
	nr23 := b.shape("nr23", 1, 1)
	if _, ok := b.kv["nr"]; ok {
		nr23[0] = b.pos("nr", 1)
	}
	kv := b.pos("kv", 96)
	nb := b.pos("nb", 8)
	mask := b.bool("mask")
	sinks := b.bool("sinks")
	maxBias := b.float("max_bias", 0)
	softcap := b.float("logit_softcap", 0)
	if p, ok := b.get("prec"); ok && p != "def" && p != "f32" && p != "default" {
		b.fail("prec: want def or f32, got %q", p)
	}
	tkv := b.typ("type_KV", ops.F16)
	b.identityPerm("permute", []int64{0, 1, 2, 3})
	if b.err != nil {
		return
	}
	if sinks {
		b.fail("sinks=1 is not supported: et's flash_attn_ext sources are [q, k, v, mask]")
		return
	}
	bs := int64(tkv.BlockSize())
	pad := func(x int64) int64 { return (x + bs - 1) / bs * bs }
	q := b.leaf("q", ops.F32, []int64{pad(hsk), nb, nh * nr23[0], nr23[1]}, defaultRange)
	k := b.leaf("k", tkv, []int64{pad(hsk), kv, nh, nr23[1]}, defaultRange)
	v := b.leaf("v", tkv, []int64{pad(hsv), kv, nh, nr23[1]}, defaultRange)
	src := []string{q, k, v}
	if mask {
		src = append(src, b.leaf("mask", ops.F16, []int64{kv, nb, 1, nr23[1]}, defaultRange))
	}
	scale := 1 / math.Sqrt(float64(hsk))
	if softcap != 0 {
		scale /= softcap
	}
	b.node("out", ops.OpFlashAttnExt, map[string]any{"scale": scale, "max_bias": maxBias, "logit_softcap": softcap}, src...)
}

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
// test_norm, test_flash_attn_ext, and the classes the casestring_<family>.go files
// lists).
//
// Defaults for omitted keys: shape keys (m, n, k, ne, ne_a, ...) take the
// test class's constructor default; batch and broadcast repeat keys (bs,
// nr, nr23) default to 1, so that a short string such as
// MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096) is one matrix-vector
// product and not the constructor's 10x10 batch of 2x2 repeats; flags
// take the constructor's default too (off, except FLASH_ATTN_EXT's mask and
// kv_view and IM2COL's is_2D). test-backend-ops always prints every key,
// so strings copied from its output are unaffected.
//
// inplace=1 makes the op's result a view of its first source (ggml's
// *_inplace op): the node is InPlace, and et launches it with the same
// aliasing ggml-et does (dst.data == src0.data). Every key test-backend-ops
// prints (ggml d99724f2) is acted on; internal/runner's whole-list test
// checks every case string of that version.

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
		"MUL_MAT":          buildMulMat,
		"MUL_MAT_HADAMARD": buildMulMatHadamard,
		"ADD":              func(b *csBuilder) { buildBinary(b, "add") },
		"SUB":              func(b *csBuilder) { buildBinary(b, "sub") },
		"MUL":              func(b *csBuilder) { buildBinary(b, "mul") },
		"RMS_NORM":         func(b *csBuilder) { buildNorm(b, "rms_norm") },
		"NORM":             func(b *csBuilder) { buildNorm(b, "norm") },
		"SCALE":            buildScale,
		"SOFT_MAX":         buildSoftMax,
		"ROPE":             buildRope,
		"GET_ROWS":         buildGetRows,
		"SET_ROWS":         buildSetRows,
		"CPY":              buildCpy,
		"CONT":             buildCont,
		"FLASH_ATTN_EXT":   buildFlashAttn,

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

// MUL_MAT(type_a, type_b, m, n, k, bs=[2], nr=[2], per=[4], k_v, o,
// src_overlap), as test_mul_mat builds it: a is [k, m, bs0, bs1], b is [k,
// n, bs0*nr0, bs1*nr1]; per != identity builds both as permuted tensors
// and permutes them back; k_v > 0 makes a and b views of their first k
// columns of [k_v, ...] tensors; src_overlap makes a and b views of one
// [2k, max(m, n), bs0*nr0, bs1*nr1] tensor (b at offset k elements); o > 1
// adds o-1 more products of a and b to the first (out = mm + mm2 + ...),
// and the output is the last add. MUL_MAT_HADAMARD is the same case with a
// filled with the Walsh-Hadamard matrix (init hadamard); ggml's hint that
// src0 is one changes no result.
func buildMulMat(b *csBuilder) { buildMulMatInit(b, defaultRange) }

func buildMulMatHadamard(b *csBuilder) { buildMulMatInit(b, "hadamard") }

func buildMulMatInit(b *csBuilder, initA string) {
	ta := b.typ("type_a", ops.F32)
	tb := b.typ("type_b", ops.F32)
	m := b.pos("m", 32)
	n := b.pos("n", 32)
	k := b.pos("k", 32)
	bs := b.shape("bs", 1, 1)
	nr := b.shape("nr", 1, 1)
	per := b.ints("per", 0, 1, 2, 3)
	kv := b.int("k_v", 0)
	o := b.pos("o", 1)
	overlap := b.bool("src_overlap")
	if b.err != nil {
		return
	}
	if kv != 0 && kv < k {
		b.fail("k_v = %d, want 0 or at least k = %d", kv, k)
		return
	}
	if o > 16 {
		b.fail("o = %d, want 1 to 16", o)
		return
	}
	neA := []int64{k, m, bs[0], bs[1]}
	neB := []int64{k, n, bs[0] * nr[0], bs[1] * nr[1]}
	identity := per[0] == 0 && per[1] == 1 && per[2] == 2 && per[3] == 3
	var a, bb string
	switch {
	case !identity:
		if kv != 0 || overlap {
			b.fail("per with k_v or src_overlap is not a test_mul_mat case")
			return
		}
		if !isPermutation(per) {
			b.fail("per=%v is not a permutation of 0..3", per)
			return
		}
		pa := []int64{neA[per[0]], neA[per[1]], neA[per[2]], neA[per[3]]}
		pb := []int64{neB[per[0]], neB[per[1]], neB[per[2]], neB[per[3]]}
		b.leaf("a", ta, pa, initA)
		b.leaf("b", tb, pb, defaultRange)
		axes := map[string]any{"axes": per}
		a = b.node("a_perm", ops.OpPermute, axes, "a")
		bb = b.node("b_perm", ops.OpPermute, axes, "b")
	case overlap:
		if ta != tb || kv != 0 {
			b.fail("src_overlap=1 needs type_a == type_b and k_v = 0")
			return
		}
		full := []int64{2 * k, max(m, n), neB[2], neB[3]}
		b.leaf("base", ta, full, defaultRange)
		nb := contiguousNb(ta, full)
		strides := [3]uint64{nb[1], nb[2], nb[3]}
		a = b.viewNode("a", "base", neA, strides, 0)
		bb = b.viewNode("b", "base", neB, strides, ta.RowSize(k))
	case kv != 0:
		fa := []int64{kv, m, bs[0], bs[1]}
		fb := []int64{kv, n, neB[2], neB[3]}
		b.leaf("a", ta, fa, initA)
		b.leaf("b", tb, fb, defaultRange)
		a = b.viewOf("a", ta, fa, neA)
		bb = b.viewOf("b", tb, fb, neB)
	default:
		a = b.leaf("a", ta, neA, initA)
		bb = b.leaf("b", tb, neB, defaultRange)
	}
	if o == 1 {
		b.node("out", ops.OpMulMat, nil, a, bb)
		return
	}
	cur := b.node("mm", ops.OpMulMat, nil, a, bb)
	for i := int64(1); i < o; i++ {
		mm := b.node(fmt.Sprintf("mm%d", i+1), ops.OpMulMat, nil, a, bb)
		name := "out"
		if i < o-1 {
			name = fmt.Sprintf("sum%d", i)
		}
		cur = b.node(name, ops.OpAdd, nil, cur, mm)
	}
}

// ADD/SUB/MUL(type, ne=[4], nr=[4], nf, perm1, src_overlap), as
// test_bin_bcast builds them: a is ne*nr, b is ne (repeated over a); nf >
// 1 chains nf ops with nf different b's; perm1 makes each b as [ne1, ne2,
// ne0, ne3] permuted by (1, 2, 0, 3); src_overlap makes b the view [ne0,
// ne1, ne2, 2*(ne3/3)] of a at offset (ne3/3)*a.nb3 and the first operand
// the same-shaped view of a at offset 0. MUL's inputs are uniform in
// [0.9, 1.1], the others' in [-1, 1], as test_bin_bcast draws them.
func buildBinary(b *csBuilder, op ops.Op) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 1, 1)
	nr := b.shape("nr", 1, 1, 1, 1)
	nf := b.int("nf", 1)
	perm1 := b.bool("perm1")
	overlap := b.bool("src_overlap")
	if b.err != nil {
		return
	}
	if nf < 1 || nf > 16 {
		b.fail("nf = %d, want 1 to 16", nf)
		return
	}
	init := defaultRange
	if op == ops.OpMul {
		init = "uniform(0.9, 1.1)"
	}
	neA := make([]int64, 4)
	for i := range neA {
		neA[i] = ne[i] * nr[i]
	}
	cur := b.leaf("a", t, neA, init)
	nbA := contiguousNb(t, neA)
	ov := []int64{ne[0], ne[1], ne[2], 2 * (ne[3] / 3)}
	if overlap {
		if ov[3] == 0 {
			b.fail("src_overlap=1 needs ne3 >= 3 (the views are 2*(ne3/3) deep)")
			return
		}
		cur = b.viewNode("a_view", "a", ov, [3]uint64{nbA[1], nbA[2], nbA[3]}, 0)
	}
	for i := int64(0); i < nf; i++ {
		name := "b"
		out := "out"
		if nf > 1 {
			name = fmt.Sprintf("b%d", i)
			if i < nf-1 {
				out = fmt.Sprintf("out%d", i)
			}
		}
		var src string
		switch {
		case perm1:
			b.leaf(name, t, []int64{ne[1], ne[2], ne[0], ne[3]}, init)
			src = b.node(name+"_perm", ops.OpPermute, map[string]any{"axes": []int64{1, 2, 0, 3}}, name)
		case overlap:
			src = b.viewNode(name, "a", ov, [3]uint64{nbA[1], nbA[2], nbA[3]}, uint64(ne[3]/3)*nbA[3])
		default:
			src = b.leaf(name, t, ne, init)
		}
		cur = b.node(out, op, nil, cur, src)
	}
}

// RMS_NORM(type, ne=[4], v, eps, inplace) and NORM(type, ne=[4], v, eps,
// noncontig_rows), as test_rms_norm and test_norm build them:
// noncontig_rows (NORM) makes a as [ne1, ne0, ne2, ne3] and permutes dims
// 0 and 1 back; v then views a as ne/2 in every dim with a's strides
// (ggml_view_4d(a, ne0/2, ne1/2, ne2/2, ne3/2, a->nb[1..3], 0); a dim of 1
// stays 1 here, where ggml would make it empty).
func buildNorm(b *csBuilder, op ops.Op) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 64, 5, 4, 3)
	v := b.bool("v")
	eps := b.float("eps", 1e-6)
	nc := false
	if op == ops.OpNorm {
		nc = b.bool("noncontig_rows")
	} else {
		b.inplace = b.bool("inplace")
	}
	if b.err != nil {
		return
	}
	b.node("out", op, map[string]any{"eps": eps}, b.normInput(t, ne, nc, v))
}

// normInput is the input of test_norm and test_l2_norm: a of shape ne
// (made as [ne1, ne0, ne2, ne3] and permuted back with noncontig_rows),
// then with v the ne/2 view with a's strides.
func (b *csBuilder) normInput(t ops.Type, ne []int64, nc, v bool) string {
	var x string
	nb := contiguousNb(t, ne)
	if nc {
		x = b.leaf("a", t, []int64{ne[1], ne[0], ne[2], ne[3]}, defaultRange)
		nb = contiguousNb(t, []int64{ne[1], ne[0], ne[2], ne[3]})
		nb[0], nb[1] = nb[1], nb[0]
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": []int64{1, 0, 2, 3}}, x)
	} else {
		x = b.leaf("a", t, ne, defaultRange)
	}
	if v {
		half := make([]int64, 4)
		for i := range half {
			half[i] = max(ne[i]/2, 1)
		}
		x = b.viewNode(x+"_view", x, half, [3]uint64{nb[1], nb[2], nb[3]}, 0)
	}
	return x
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
// [a.ne2], with or without a mask (the node's sinks param says which).
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
	src := []string{b.leaf("a", t, []int64{ne[0], ne[1], ne[2] * nr[0], ne[3] * nr[1]}, defaultRange)}
	if mask {
		src = append(src, b.leaf("mask", mt, ne, defaultRange))
	}
	if sinks {
		src = append(src, b.leaf("sinks", ops.F32, []int64{ne[2] * nr[0]}, defaultRange))
	}
	b.node("out", ops.OpSoftMax, map[string]any{"scale": scale, "max_bias": maxBias, "sinks": sinks}, src...)
}

// ropeModes maps ggml's integer rope modes to the case-format names.
var ropeModes = map[int64]string{0: "normal", 2: "neox", 8: "mrope", 24: "vision", 40: "imrope"}

// ROPE(type, ne_a=[4], n_dims, mode, n_ctx, fs, ef, af, ff, v, inplace,
// n_offs), as test_rope builds it: positions are i32 [ne_a2] (4*ne_a2 for
// mrope, vision and imrope) drawn from [0, n_ctx); ff adds f32
// freq_factors [n_dims/2] in [0.9, 1.1]; v=1 views a out of a [2*ne0,
// 4*ne1, 3*ne2, ne3] tensor, v=2 is the second half in dim 0 of a [2*ne0,
// ne1, ne2, ne3] tensor (view offset ne0 elements); n_offs is the first
// rotated dimension (ggml_rope_set_offset). freq_base is 10000, beta_fast
// and beta_slow 1 and n_ctx_orig 0, as in test_rope. mrope and imrope use
// sections [n_dims/3, n_dims/3, n_dims/3, 0]; vision rotates with n_dims/2
// and sections [n_dims/4, n_dims/4, 0, 0], as test_rope calls
// ggml_rope_multi.
func buildRope(b *csBuilder) { buildRopeOp(b, ops.OpRope) }

// buildRopeOp builds ROPE, or ROPE_BACK (test_rope with forward = false:
// the same graph, whose op takes the integer mode, and inplace has no
// effect on it).
func buildRopeOp(b *csBuilder, op ops.Op) {
	back := op == ops.OpRopeBack
	t := b.typ("type", ops.F32)
	ne := b.shape("ne_a", 10, 5, 3, 1)
	nDims := b.int("n_dims", 10)
	mode := b.int("mode", 0)
	nCtx := b.pos("n_ctx", 512)
	fs := b.float("fs", 1)
	ef := b.float("ef", 0)
	af := b.float("af", 0)
	ff := b.bool("ff")
	v := b.int("v", 0)
	if inplace := b.bool("inplace"); !back {
		b.inplace = inplace
	}
	nOffs := b.int("n_offs", 0)
	if b.err != nil {
		return
	}
	modeName, ok := ropeModes[mode]
	if !ok {
		b.fail("mode=%d is not a ggml rope mode (want 0 normal, 2 neox, 8 mrope, 24 vision or 40 imrope)", mode)
		return
	}
	x := "a"
	switch v {
	case 0:
		b.leaf("a", t, ne, defaultRange)
	case 1:
		full := []int64{2 * ne[0], 4 * ne[1], 3 * ne[2], ne[3]}
		b.leaf("a", t, full, defaultRange)
		x = b.viewOf("a", t, full, ne)
	case 2:
		full := []int64{2 * ne[0], ne[1], ne[2], ne[3]}
		b.leaf("a", t, full, defaultRange)
		nb := contiguousNb(t, full)
		x = b.viewNode("a_view", "a", ne, [3]uint64{nb[1], nb[2], nb[3]}, uint64(ne[0])*uint64(t.TypeSize()))
	case 3:
		if !back {
			b.fail("v = 3, want 0, 1 (strided view) or 2 (second half of dim 0)")
			return
		}
		full := []int64{2 * ne[0], 4 * ne[1], 3 * ne[2], ne[3]}
		b.leaf("a", t, full, defaultRange)
		x = b.viewOf("a", t, full, ne)
	default:
		b.fail("v = %d, want 0, 1 (strided view) or 2 (second half of dim 0)", v)
		return
	}
	npos := ne[2]
	opDims := nDims
	params := map[string]any{
		"mode": modeName, "n_ctx_orig": 0,
		"freq_base": 10000.0, "freq_scale": fs, "ext_factor": ef, "attn_factor": af,
		"beta_fast": 1.0, "beta_slow": 1.0, "n_offs": nOffs,
	}
	switch modeName {
	case "mrope", "imrope":
		npos *= 4
		params["sections"] = []int64{nDims / 3, nDims / 3, nDims / 3, 0}
	case "vision":
		npos *= 4
		opDims = nDims / 2
		params["sections"] = []int64{nDims / 4, nDims / 4, 0, 0}
	}
	params["n_dims"] = opDims
	if back {
		params["mode"] = mode // rope_back takes ggml's mode bits
	}
	src := []string{x, b.leaf("pos", ops.I32, []int64{npos}, fmt.Sprintf("randint(0, %d)", nCtx))}
	if ff {
		src = append(src, b.leaf("freq_factors", ops.F32, []int64{max(nDims/2, 1)}, "uniform(0.9, 1.1)"))
	}
	b.node("out", op, params, src...)
}

// Unary ops, e.g. SILU(type, ne_a=[4], v): v views a out of a
// [3*ne0, ne1, ne2, ne3] tensor. Inputs are uniform in [-150, 150], the
// range test_unary uses.
//
// FLOOR, CEIL, ROUND and TRUNC also have test classes of their own
// (test_floor, ...): FLOOR(type, ne=[4] (10,2,2,2)), inputs uniform in
// [-10, 10]; a string with the ne key is that form.
func buildUnary(b *csBuilder, op string) {
	if _, ok := b.kv["ne"]; ok && (op == "floor" || op == "ceil" || op == "round" || op == "trunc") {
		t := b.typ("type", ops.F32)
		ne := b.shape("ne", 10, 2, 2, 2)
		if b.err != nil {
			return
		}
		b.node("out", ops.OpUnary, map[string]any{"op": op}, b.leaf("a", t, ne, "uniform(-10, 10)"))
		return
	}
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

// GET_ROWS(type, n, m, r, be1, be2, v), as test_get_rows builds it: data
// is [n, m, be1, be2], rows i32 [r, be1, be2] in [0, m); v takes the
// [r/2, be1, be2] view of the rows. "b" is an older spelling of be1.
func buildGetRows(b *csBuilder) {
	t := b.typ("type", ops.F32)
	n := b.pos("n", 10)
	m := b.pos("m", 5)
	r := b.pos("r", 3)
	var be1 int64
	if _, ok := b.kv["b"]; ok {
		be1 = b.pos("b", 1)
		if _, ok := b.kv["be1"]; ok {
			b.fail("b and be1 cannot be mixed")
		}
	} else {
		be1 = b.pos("be1", 1)
	}
	be2 := b.pos("be2", 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	data := b.leaf("data", t, []int64{n, m, be1, be2}, defaultRange)
	rows := b.leaf("rows", ops.I32, []int64{r, be1, be2}, fmt.Sprintf("randint(0, %d)", m))
	if v {
		nb := contiguousNb(ops.I32, []int64{r, be1, be2})
		rows = b.viewNode("rows_view", rows, []int64{r / 2, be1, be2}, [3]uint64{nb[1], nb[2], nb[3]}, 0)
	}
	b.node("out", ops.OpGetRows, nil, data, rows)
}

// SET_ROWS(type_src, type_dst, type_idx, ne=[4], nr23=[2], r, v), as
// test_set_rows builds it: dst (type_dst) is [ne0, ne1, ne2*nr23_0,
// ne3*nr23_1], src (type_src) [ne0, r, same], idx (type_idx) [r, ne2,
// ne3] with distinct rows per index vector; v=1 views src as its first r/2
// rows and idx as its first r/2 indices (none for r = 1: an empty
// set_rows, as in test-backend-ops). "type" is an older spelling of
// type_dst.
func buildSetRows(b *csBuilder) {
	var t ops.Type
	if _, ok := b.kv["type"]; ok {
		t = b.typ("type", ops.F32)
		if _, ok := b.kv["type_dst"]; ok {
			b.fail("type and type_dst cannot be mixed")
		}
	} else {
		t = b.typ("type_dst", ops.F32)
	}
	tsrc := b.typ("type_src", ops.F32)
	ti := b.typ("type_idx", ops.I64)
	ne := b.shape("ne", 16, 5, 1, 1)
	nr := b.shape("nr23", 1, 1)
	r := b.pos("r", 1)
	v := b.bool("v")
	if b.err != nil {
		return
	}
	if r > ne[1] {
		b.fail("r = %d is more than the %d rows of dst", r, ne[1])
		return
	}
	n2, n3 := ne[2]*nr[0], ne[3]*nr[1]
	dst := b.leaf("dst", t, []int64{ne[0], ne[1], n2, n3}, defaultRange)
	src := b.leaf("src", tsrc, []int64{ne[0], r, n2, n3}, defaultRange)
	idx := b.leaf("idx", ti, []int64{r, ne[2], ne[3]}, fmt.Sprintf("perm(%d)", ne[1]))
	if v {
		snb := contiguousNb(tsrc, []int64{ne[0], r, n2, n3})
		src = b.viewNode("src_view", src, []int64{ne[0], r / 2, n2, n3}, [3]uint64{snb[1], snb[2], snb[3]}, 0)
		inb := contiguousNb(ti, []int64{r, ne[2], ne[3]})
		idx = b.viewNode("idx_view", idx, []int64{r / 2, ne[2], ne[3]}, [3]uint64{inb[1], inb[2], inb[3]}, 0)
	}
	b.node("out", ops.OpSetRows, nil, dst, src, idx)
}

// CPY(type_src, type_dst, ne_src=[4], ne_dst=[4], permute_src=[4],
// permute_dst=[4], _src_transpose, dst_alloc=[4]), as test_cpy builds it:
// src (type_src, ne_src) is permuted by permute_src when that is not all
// zero, then transposed with _src_transpose; it is copied into dst
// (type_dst) of shape ne_dst (default: src's shape), which is a new
// tensor permuted by permute_dst when that is not all zero, or with
// dst_alloc the [ne_dst] view at offset 0 of a dst_alloc tensor. Inputs
// are uniform in [-150, 150]. "ne" is an older spelling of ne_src;
// _src_use_permute and _dst_use_permute (older strings) are accepted and
// implied by the permutes.
func buildCpy(b *csBuilder) {
	ts := b.typ("type_src", ops.F32)
	td := b.typ("type_dst", ops.F32)
	var ne []int64
	if _, ok := b.kv["ne"]; ok {
		ne = b.shape("ne", 10, 10, 10, 1)
		if _, ok := b.kv["ne_src"]; ok {
			b.fail("ne and ne_src cannot be mixed")
		}
	} else {
		ne = b.shape("ne_src", 10, 10, 10, 1)
	}
	_, useDstShape := b.kv["ne_dst"]
	neDst := b.shape("ne_dst", 1, 1, 1, 1)
	ps := b.ints("permute_src", 0, 0, 0, 0)
	pd := b.ints("permute_dst", 0, 0, 0, 0)
	transpose := b.bool("_src_transpose")
	_, useAlloc := b.kv["dst_alloc"]
	alloc := b.shape("dst_alloc", 1, 1, 1, 1)
	b.bool("_src_use_permute")
	b.bool("_dst_use_permute")
	if b.err != nil {
		return
	}
	const init = "uniform(-150, 150)"
	x := b.leaf("src", ts, ne, init)
	cur := append([]int64(nil), ne...)
	if ps[0]+ps[1]+ps[2]+ps[3] > 0 {
		if !isPermutation(ps) {
			b.fail("permute_src=%v is not a permutation of 0..3", ps)
			return
		}
		x = b.node("src_permuted", ops.OpPermute, map[string]any{"axes": ps}, x)
		var np [4]int64
		for i := range 4 {
			np[ps[i]] = cur[i]
		}
		cur = np[:]
	}
	if transpose {
		x = b.node("src_transposed", ops.OpTranspose, nil, x)
		cur[0], cur[1] = cur[1], cur[0]
	}
	if !useDstShape {
		neDst = cur
	}
	usePermDst := pd[0]+pd[1]+pd[2]+pd[3] > 0
	if !useDstShape && !useAlloc && !usePermDst {
		// dst is a new contiguous tensor of src's shape.
		b.node("out", ops.OpCpy, map[string]any{"type": td.String()}, x)
		return
	}
	var dst string
	switch {
	case useAlloc:
		b.leaf("dst_buf", td, alloc, init)
		nb := contiguousNb(td, alloc)
		dst = b.viewNode("dst_view", "dst_buf", neDst, [3]uint64{nb[1], nb[2], nb[3]}, 0)
	default:
		dst = b.leaf("dst", td, neDst, init)
		if usePermDst {
			if !isPermutation(pd) {
				b.fail("permute_dst=%v is not a permutation of 0..3", pd)
				return
			}
			dst = b.node("dst_permuted", ops.OpPermute, map[string]any{"axes": pd}, dst)
		}
	}
	b.node("out", ops.OpCpy, map[string]any{"type": td.String()}, x, dst)
}

// CONT(type, ne=[4], use_view_slice, permute=[4]), as test_cont builds
// it: cont of a permuted by permute when that is not all zero, else of
// the [ne0, 1, ne2, ne3] view of a's last row (offset nb0*(ne1-1), as
// test_cont computes it) with use_view_slice, else of a's transpose.
func buildCont(b *csBuilder) {
	t := b.typ("type", ops.F32)
	ne := b.shape("ne", 10, 10, 10, 1)
	slice := b.bool("use_view_slice")
	perm := b.ints("permute", 0, 0, 0, 0)
	if b.err != nil {
		return
	}
	x := b.leaf("a", t, ne, defaultRange)
	switch {
	case perm[0]+perm[1]+perm[2]+perm[3] > 0:
		if !isPermutation(perm) {
			b.fail("permute=%v is not a permutation of 0..3", perm)
			return
		}
		x = b.node("a_perm", ops.OpPermute, map[string]any{"axes": perm}, x)
	case slice:
		nb := contiguousNb(t, ne)
		x = b.viewNode("a_slice", x, []int64{ne[0], 1, ne[2], ne[3]}, [3]uint64{nb[1], nb[2], nb[3]}, nb[0]*uint64(ne[1]-1))
	default:
		x = b.node("a_t", ops.OpTranspose, nil, x)
	}
	b.node("out", ops.OpCont, nil, x)
}

// FLASH_ATTN_EXT(hsk, hsv, nh, nr23=[2], kv, nb, mask, sinks, max_bias,
// logit_softcap, prec, type_K, type_V, permute=[4], kv_view,
// v_is_view_of_k), as test_flash_attn_ext builds it: head sizes are padded
// to the K (V) block size; q is f32 [hsk, nb, nh*nr23_0, nr23_1], k
// (type_K) [hsk, kv, nh, nr23_1], v (type_V) [hsv, kv, nh, nr23_1]; each
// is made in the permuted order (dim i of the tensor has size ne[p[i]]
// where p is the inverse of permute) and then permuted with permute, so
// that the op sees the shapes above with permuted strides. kv_view (the
// default) makes k and v views of the first half of a buffer twice as
// long in dim 1 (a KV cache); v_is_view_of_k makes v the first hsv
// columns of k instead. mask is f16 [kv, nb, 1, nr23_1] kq_mask (GGML_KQ_MASK_PAD
// is 1 in this ggml), sinks f32 [nh*nr23_0]; scale is 1/sqrt(hsk) (ggml's
// CPU divides it by logit_softcap itself). prec (def or f32) is accepted
// and ignored: et's reference accumulates in f32, and ggml-et accepts
// both. type_KV is an older spelling of type_K = type_V, and "nr" of a
// single nr23_0. mask and kv_view default to 1 and type_K/type_V to f16,
// as in test_flash_attn_ext; the other flags default to 0.
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
	mask := b.boolDef("mask", true)
	sinks := b.bool("sinks")
	maxBias := b.float("max_bias", 0)
	softcap := b.float("logit_softcap", 0)
	if p, ok := b.get("prec"); ok && p != "def" && p != "f32" && p != "default" {
		b.fail("prec: want def or f32, got %q", p)
	}
	tk, tv := ops.F16, ops.F16
	if _, ok := b.kv["type_KV"]; ok {
		tk = b.typ("type_KV", ops.F16)
		tv = tk
		for _, k := range []string{"type_K", "type_V"} {
			if _, ok := b.kv[k]; ok {
				b.fail("type_KV cannot be mixed with type_K and type_V")
			}
		}
	} else {
		tk = b.typ("type_K", ops.F16)
		tv = b.typ("type_V", ops.F16)
	}
	perm := b.ints("permute", 0, 1, 2, 3)
	kvView := b.boolDef("kv_view", true)
	vOfK := b.bool("v_is_view_of_k")
	if b.err != nil {
		return
	}
	if !isPermutation(perm) {
		b.fail("permute=%v is not a permutation of 0..3", perm)
		return
	}
	pad := func(x int64, t ops.Type) int64 { bs := int64(t.BlockSize()); return (x + bs - 1) / bs * bs }
	hskP, hsvP := pad(hsk, tk), pad(hsv, tv)
	if vOfK && (tk != tv || hsvP > hskP) {
		b.fail("v_is_view_of_k=1 needs type_K == type_V and hsv <= hsk")
		return
	}
	identity := perm[0] == 0 && perm[1] == 1 && perm[2] == 2 && perm[3] == 3
	// permuted returns the tensor and its byte strides.
	permuted := func(name string, t ops.Type, ne []int64, view bool) (string, [4]uint64) {
		var np [4]int64
		for i := range 4 {
			np[perm[i]] = ne[i]
		}
		x := name
		var nbs [4]uint64
		if view {
			full := []int64{np[0], 2 * np[1], np[2], np[3]}
			b.leaf(name+"_cache", t, full, defaultRange)
			nbs = contiguousNb(t, full)
			x = b.viewNode(name+"_view", name+"_cache", np[:], [3]uint64{nbs[1], nbs[2], nbs[3]}, 0)
		} else {
			b.leaf(name, t, np[:], defaultRange)
			nbs = contiguousNb(t, np[:])
		}
		if identity {
			return x, nbs
		}
		var pnb [4]uint64
		for i := range 4 {
			pnb[perm[i]] = nbs[i]
		}
		return b.node(name+"_perm", ops.OpPermute, map[string]any{"axes": perm}, x), pnb
	}
	q, _ := permuted("q", ops.F32, []int64{hskP, nb, nh * nr23[0], nr23[1]}, false)
	k, knb := permuted("k", tk, []int64{hskP, kv, nh, nr23[1]}, kvView)
	var v string
	if vOfK {
		// ggml_view_4d(k, hsv, kv, nh, nr23_1, k->nb[1], k->nb[2], k->nb[3], 0)
		v = b.viewNode("v_of_k", k, []int64{hsvP, kv, nh, nr23[1]}, [3]uint64{knb[1], knb[2], knb[3]}, 0)
	} else {
		v, _ = permuted("v", tv, []int64{hsvP, kv, nh, nr23[1]}, kvView)
	}
	src := []string{q, k, v}
	if mask {
		src = append(src, b.leaf("mask", ops.F16, []int64{kv, nb, 1, nr23[1]}, "kq_mask"))
	}
	if sinks {
		src = append(src, b.leaf("sinks", ops.F32, []int64{nh * nr23[0]}, "uniform(-10, 10)"))
	}
	b.node("out", ops.OpFlashAttnExt, map[string]any{
		"scale": 1 / math.Sqrt(float64(hsk)), "max_bias": maxBias, "logit_softcap": softcap, "sinks": sinks,
	}, src...)
}

// isPermutation reports whether p is a permutation of 0..len(p)-1.
func isPermutation(p []int64) bool {
	seen := make([]bool, len(p))
	for _, x := range p {
		if x < 0 || x >= int64(len(p)) || seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

// contiguousNb is the byte strides of a contiguous tensor of type t and
// shape ne (1 to 4 dims).
func contiguousNb(t ops.Type, ne []int64) [ops.MaxDims]uint64 {
	var full [ops.MaxDims]int64
	for i := range full {
		full[i] = 1
	}
	copy(full[:], ne)
	return ops.ContiguousStrides(t, full)
}

// viewNode adds a view node of shape ne with byte strides nb1..nb3 and a
// byte offset over x: ggml_view_4d(x, ne..., nb1, nb2, nb3, offset).
func (b *csBuilder) viewNode(name, x string, ne []int64, nb [3]uint64, off uint64) string {
	ne4 := []int64{1, 1, 1, 1}
	copy(ne4, ne)
	return b.node(name, ops.OpView, map[string]any{
		"ne":     ne4,
		"nb":     []int64{int64(nb[0]), int64(nb[1]), int64(nb[2])},
		"offset": int64(off),
	}, x)
}

// boolDef reads a 0/1 key whose default is def.
func (b *csBuilder) boolDef(key string, def bool) bool {
	if _, ok := b.kv[key]; !ok {
		b.get(key)
		return def
	}
	return b.bool(key)
}

// enumKey reads an enum key given either as ggml's integer value
// (test-backend-ops prints enums as integers) or as its name.
func (b *csBuilder) enumKey(key string, def string, values map[int64]string) string {
	v, ok := b.get(key)
	if !ok {
		return def
	}
	var n int64
	if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v {
		if name, ok := values[n]; ok {
			return name
		}
	}
	for _, name := range values {
		if strings.EqualFold(v, name) {
			return name
		}
	}
	var want []string
	for i := int64(0); i < int64(len(values)); i++ {
		want = append(want, fmt.Sprintf("%d %s", i, values[i]))
	}
	b.fail("%s: unknown value %q (want %s)", key, v, strings.Join(want, ", "))
	return def
}

package plan

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// restCase is one node of the last ops: either supported (kernel set) and
// then encoded and decoded, or unsupported with the exact reasons.
type restCase struct {
	name    string
	op      string
	params  ops.Params
	dst     *ops.Tensor
	srcs    []*ops.Tensor
	kernel  string   // "" = unsupported
	reasons []string // substrings, each of some reason (unsupported only)
	nReason int      // when > 0, the exact number of reasons
	// For a launch: the scalars (ints and floats by field name), the
	// leading dst op_params, the tensor fields, the pointer fields (field
	// -> source index, -1 = the result).
	scalars  map[string]float64
	opParams []int32
	tensors  []string
	pointers map[string]int
}

func restAddr(base int) uint64 { return 0x10000 * uint64(base+1) }

func (tc restCase) run(t *testing.T, m *abi.Manifest) {
	t.Helper()
	params := tc.params
	if params == nil {
		params = ops.Params{}
	}
	g := rawGraph(tc.op, params, tc.dst, tc.srcs...)
	p, err := Build(g, m, Options{Uberkernel: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &p.Steps[0]
	if tc.kernel == "" {
		if s.Kind != StepFallback || s.Verdict.Supported {
			t.Fatalf("kind %s kernel %s, want fallback", s.Kind, s.Kernel)
		}
		hasReasons(t, s.Verdict.Reasons, tc.reasons...)
		if tc.nReason > 0 && len(s.Verdict.Reasons) != tc.nReason {
			t.Errorf("%d reasons %q, want %d", len(s.Verdict.Reasons), s.Verdict.Reasons, tc.nReason)
		}
		return
	}
	if s.Kind != StepLaunch || s.Kernel != tc.kernel {
		t.Fatalf("kind %s kernel %q, want launch %q (reasons %q)", s.Kind, s.Kernel, tc.kernel, s.Verdict.Reasons)
	}
	if len(s.Verdict.Reasons) != 0 {
		t.Errorf("supported with reasons %q", s.Verdict.Reasons)
	}
	if _, want := m.UberkernelID(tc.kernel); s.Batchable != want {
		t.Errorf("batchable %v, want %v", s.Batchable, want)
	}
	out := len(tc.srcs) // rawGraph: leaves 0..n-1, then the result
	if tc.tensors != nil {
		var got []string
		for f := range s.Tensors {
			got = append(got, f)
		}
		sort.Strings(got)
		want := slices.Clone(tc.tensors)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("tensor fields %v, want %v", got, want)
		}
	}
	raw, err := p.Encode(s, restAddr)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != s.Layout.Size {
		t.Fatalf("params are %d bytes, layout %s is %d", len(raw), s.Layout.Name, s.Layout.Size)
	}
	v, err := m.Decode(s.Layout, raw)
	if err != nil {
		t.Fatal(err)
	}
	if tc.pointers != nil {
		if len(s.Tensors) != 0 {
			t.Errorf("pointer kernel has tensor fields %v", s.Tensors)
		}
		for f, src := range tc.pointers {
			want := restAddr(out)
			if src >= 0 {
				want = restAddr(src)
			}
			if got := v.Uint(f); got != want {
				t.Errorf("pointer %s = %#x, want %#x", f, got, want)
			}
		}
		if len(s.Pointers) != len(tc.pointers) {
			t.Errorf("pointer fields %v, want %v", s.Pointers, tc.pointers)
		}
	} else {
		d, ok := v.Tensor(s.DstField)
		opv, _ := m.OpValue(tc.op)
		if !ok || d.Ne != tc.dst.Ne || d.Data != restAddr(out) || d.Op != opv {
			t.Errorf("dst field %s = %+v", s.DstField, d)
		}
		for i, want := range tc.opParams {
			if d.OpParams[i] != want {
				t.Errorf("dst.op_params[%d] = %d, want %d (op_params %v)", i, d.OpParams[i], want, d.OpParams)
			}
		}
	}
	for k, want := range tc.scalars {
		got := float64(v.Float(k))
		if _, isInt := v.Ints[k]; isInt {
			got = float64(v.Int(k))
		}
		if got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
}

func f32t(ne ...int64) *ops.Tensor { return ops.New(ops.F32, ne...) }

// gapped is a tensor whose rows are dense but with a gap after each row
// (not contiguous, still row-contiguous).
func gapped(typ ops.Type, ne ...int64) *ops.Tensor {
	t := ops.New(typ, ne...)
	for i := 1; i < ops.MaxDims; i++ {
		t.Nb[i] *= 2
	}
	return t
}

// spread is a tensor whose elements are two type sizes apart (nb0 !=
// type size).
func spread(typ ops.Type, ne ...int64) *ops.Tensor {
	t := ops.New(typ, ne...)
	for i := range ops.MaxDims {
		t.Nb[i] *= 2
	}
	return t
}

func runRest(t *testing.T, cases []restCase) {
	m := abi.Default()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, m) })
	}
}

func TestRulesTri(t *testing.T) {
	tri := func(typ string) ops.Params { return ops.Params{"type": typ} }
	runRest(t, []restCase{
		{name: "lower", op: "tri", params: tri("lower"), dst: f32t(16, 16, 2), srcs: []*ops.Tensor{f32t(16, 16, 2)},
			kernel: "tri_f32", scalars: map[string]float64{"tri_type": 3}, opParams: []int32{3}, tensors: []string{"src0", "dst"}},
		{name: "upper_diag any ne0", op: "tri", params: tri("upper_diag"), dst: f32t(5, 5), srcs: []*ops.Tensor{f32t(5, 5)},
			kernel: "tri_f32", scalars: map[string]float64{"tri_type": 0}, opParams: []int32{0}},
		{name: "upper", op: "tri", params: tri("upper"), dst: f32t(8, 8), srcs: []*ops.Tensor{f32t(8, 8)},
			kernel: "tri_f32", scalars: map[string]float64{"tri_type": 1}},
		{name: "lower_diag", op: "tri", params: tri("lower_diag"), dst: f32t(8, 8), srcs: []*ops.Tensor{f32t(8, 8)},
			kernel: "tri_f32", scalars: map[string]float64{"tri_type": 2}},
		{name: "f16", op: "tri", params: tri("lower"), dst: ops.New(ops.F16, 8, 8), srcs: []*ops.Tensor{ops.New(ops.F16, 8, 8)},
			reasons: []string{"src0 type f16 is not f32", "dst type f16 is not f32"}, nReason: 2},
		{name: "src0 not contiguous", op: "tri", params: tri("lower"), dst: f32t(8, 8), srcs: []*ops.Tensor{gapped(ops.F32, 8, 8)},
			reasons: []string{"src0 is not contiguous (ne = [8, 8, 1, 1], nb = [4, 64, 512, 512])"}, nReason: 1},
		{name: "dst not contiguous", op: "tri", params: tri("lower"), dst: gapped(ops.F32, 8, 8), srcs: []*ops.Tensor{f32t(8, 8)},
			reasons: []string{"dst is not contiguous"}, nReason: 1},
	})
}

// TestRulesTriOldManifest: a manifest without tri_types cannot encode
// tri_type, so the node falls back with that reason.
func TestRulesTriOldManifest(t *testing.T) {
	y := string(abi.DefaultYAML())
	start, end := strings.Index(y, "tri_types:"), strings.Index(y, "# The uberkernel dispatcher")
	m, err := abi.Parse("old.yaml", []byte(y[:start]+y[end:]))
	if err != nil {
		t.Fatal(err)
	}
	restCase{name: "old", op: "tri", params: ops.Params{"type": "lower"}, dst: f32t(8, 8), srcs: []*ops.Tensor{f32t(8, 8)},
		reasons: []string{"tri type lower has no value in the ABI manifest"}, nReason: 1}.run(t, m)
}

func TestRulesSet(t *testing.T) {
	set := func(kv ...any) ops.Params {
		p := ops.Params{"nb1": int64(0), "nb2": int64(0), "nb3": int64(0), "offset": int64(0), "inplace": true}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}
	a, b := f32t(64, 4), f32t(16, 2)
	runRest(t, []restCase{
		{name: "in place", op: "set", params: set("nb1", int64(256), "offset", int64(64)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			kernel: "set_f32", tensors: []string{"src1", "dst"},
			scalars:  map[string]float64{"nb1": 256, "nb2": 1024, "nb3": 1024, "offset": 64},
			opParams: []int32{256, 1024, 1024, 64, 1}},
		{name: "strides 0 are a's", op: "set", params: set(), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			kernel: "set_f32", scalars: map[string]float64{"nb1": 256, "nb2": 1024, "nb3": 1024, "offset": 0}},
		{name: "not in place", op: "set", params: set("inplace", false), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			reasons: []string{"set is not in place (inplace = false"}, nReason: 1},
		{name: "src1.ne0 8", op: "set", params: set(), dst: f32t(64, 4), srcs: []*ops.Tensor{a, f32t(8, 2)},
			reasons: []string{"src1.ne0 % 16 != 0 (src1.ne0 = 8)"}, nReason: 1},
		{name: "offset 32", op: "set", params: set("offset", int64(32)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			reasons: []string{"offset % 64 != 0 (offset = 32)"}, nReason: 1},
		{name: "nb1 96", op: "set", params: set("nb1", int64(96)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			reasons: []string{"nb1 % 64 != 0 (nb1 = 96)"}, nReason: 1},
		{name: "nb2 32", op: "set", params: set("nb2", int64(32)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			reasons: []string{"nb2 % 64 != 0 (nb2 = 32)"}, nReason: 1},
		// The crate bounds the start of the last element: 960 + 256 + 60 = 1276 > 1024.
		{name: "view past the end", op: "set", params: set("offset", int64(960)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			reasons: []string{"set view does not fit in dst (last element at byte 1276, dst has 1024 bytes)"}, nReason: 1},
		{name: "view last element at the end", op: "set", params: set("offset", int64(704)), dst: f32t(64, 4), srcs: []*ops.Tensor{a, b},
			kernel: "set_f32"},
		{name: "dst shape", op: "set", params: set(), dst: f32t(64, 5), srcs: []*ops.Tensor{a, b},
			reasons: []string{"dst and src0 differ in shape (dst.ne = [64, 5, 1, 1], src0.ne = [64, 4, 1, 1])"}, nReason: 1},
		{name: "i32", op: "set", params: set(), dst: ops.New(ops.I32, 64, 4), srcs: []*ops.Tensor{ops.New(ops.I32, 64, 4), ops.New(ops.I32, 16, 2)},
			reasons: []string{"src0 type i32 is not f32", "src1 type i32 is not f32", "dst type i32 is not f32"}, nReason: 3},
		{name: "src1 not contiguous", op: "set", params: set(), dst: f32t(64, 4), srcs: []*ops.Tensor{a, gapped(ops.F32, 16, 2)},
			reasons: []string{"src1 is not contiguous"}, nReason: 1},
		{name: "src0 not contiguous", op: "set", params: set(), dst: f32t(64, 4), srcs: []*ops.Tensor{gapped(ops.F32, 64, 4), b},
			reasons: []string{"src0 is not contiguous"}, nReason: 1},
	})
}

func TestRulesIm2col(t *testing.T) {
	conv := ops.Params{"s0": int64(2), "s1": int64(1), "p0": int64(1), "p1": int64(0), "d0": int64(1), "d1": int64(2), "is_2d": true}
	conv1d := ops.Params{"s0": int64(1), "s1": int64(1), "p0": int64(1), "p1": int64(0), "d0": int64(2), "d1": int64(1), "is_2d": false}
	kern, kern16 := f32t(3, 3, 4, 8), ops.New(ops.F16, 3, 3, 4, 8)
	img := f32t(16, 12, 4)
	dst := func(typ ops.Type) *ops.Tensor { return ops.New(typ, 36, 8, 8) }
	runRest(t, []restCase{
		{name: "f32", op: "im2col", params: conv, dst: dst(ops.F32), srcs: []*ops.Tensor{kern16, img},
			kernel: "im2col", tensors: []string{"src0", "src1", "dst"}, opParams: []int32{2, 1, 1, 0, 1, 2, 1}},
		{name: "1-D", op: "im2col", params: conv1d, dst: dst(ops.F32), srcs: []*ops.Tensor{kern, img},
			kernel: "im2col", opParams: []int32{1, 1, 1, 0, 2, 1, 0}},
		{name: "f16 from f32", op: "im2col", params: conv, dst: dst(ops.F16), srcs: []*ops.Tensor{kern, img}, kernel: "im2col"},
		{name: "f16 from f16", op: "im2col", params: conv, dst: dst(ops.F16), srcs: []*ops.Tensor{kern, ops.New(ops.F16, 16, 12, 4)}, kernel: "im2col"},
		{name: "f32 from f16", op: "im2col", params: conv, dst: dst(ops.F32), srcs: []*ops.Tensor{kern, ops.New(ops.F16, 16, 12, 4)},
			reasons: []string{"src1 type f16 is not f32"}, nReason: 1},
		{name: "q8_0 dst", op: "im2col", params: conv, dst: ops.New(ops.Q8_0, 64, 8, 8), srcs: []*ops.Tensor{kern, img},
			reasons: []string{"dst type q8_0 not in {f32, f16}"}, nReason: 1},
		{name: "data not contiguous", op: "im2col", params: conv, dst: dst(ops.F32), srcs: []*ops.Tensor{kern, gapped(ops.F32, 16, 12, 4)},
			reasons: []string{"src1 is not contiguous"}, nReason: 1},
		{name: "data nb0", op: "im2col", params: conv, dst: dst(ops.F32), srcs: []*ops.Tensor{kern, spread(ops.F32, 16, 12, 4)},
			reasons: []string{"src1 is not contiguous", "src1.nb0 != type size (nb0 = 8, type size = 4)"}, nReason: 2},
		{name: "dst not contiguous", op: "im2col", params: conv, dst: gapped(ops.F32, 36, 8, 8), srcs: []*ops.Tensor{kern, img},
			reasons: []string{"dst is not contiguous"}, nReason: 1},
		{name: "kernel not contiguous is fine", op: "im2col", params: conv, dst: dst(ops.F32), srcs: []*ops.Tensor{gapped(ops.F32, 3, 3, 4, 8), img},
			kernel: "im2col"},
	})
}

func TestRulesConv2D(t *testing.T) {
	conv := func(kv ...any) ops.Params {
		p := ops.Params{"s0": int64(1), "s1": int64(1), "p0": int64(1), "p1": int64(1), "d0": int64(1), "d1": int64(1)}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}
	flt, in, out := f32t(3, 3, 16, 16), f32t(16, 12, 16, 1), f32t(16, 12, 16, 1)
	runRest(t, []restCase{
		{name: "aligned", op: "conv_2d", params: conv(), dst: out, srcs: []*ops.Tensor{flt, in},
			kernel: "conv_2d_f32_me", tensors: []string{"src0", "src1", "dst"}, opParams: []int32{1, 1, 1, 1, 1, 1}},
		{name: "stride 2, staged", op: "conv_2d", params: conv("s0", int64(2), "s1", int64(2)), dst: f32t(8, 6, 16), srcs: []*ops.Tensor{flt, in},
			kernel: "conv_2d_f32_me", opParams: []int32{2, 2, 1, 1, 1, 1}},
		{name: "f16 filter", op: "conv_2d", params: conv(), dst: out, srcs: []*ops.Tensor{ops.New(ops.F16, 3, 3, 16, 16), in},
			reasons: []string{"src0 type f16 is not f32"}, nReason: 1},
		{name: "Cin 8", op: "conv_2d", params: conv(), dst: out, srcs: []*ops.Tensor{f32t(3, 3, 8, 16), f32t(16, 12, 8)},
			reasons: []string{"Cin % 16 != 0 (Cin = 8)"}, nReason: 1},
		{name: "Cout 24", op: "conv_2d", params: conv(), dst: f32t(16, 12, 24), srcs: []*ops.Tensor{f32t(3, 3, 16, 24), in},
			reasons: []string{"Cout % 16 != 0 (Cout = 24)"}, nReason: 1},
		{name: "N 2", op: "conv_2d", params: conv(), dst: f32t(16, 12, 16, 2), srcs: []*ops.Tensor{flt, f32t(16, 12, 16, 2)},
			reasons: []string{"N != 1 (N = 2)"}, nReason: 1},
		{name: "dilation", op: "conv_2d", params: conv("d0", int64(2)), dst: f32t(14, 12, 16), srcs: []*ops.Tensor{flt, in},
			reasons: []string{"dilation != 1 (d0 = 2, d1 = 1)"}, nReason: 1},
		{name: "stride 0", op: "conv_2d", params: conv("s1", int64(0)), dst: out, srcs: []*ops.Tensor{flt, in},
			reasons: []string{"s1 < 1 (s1 = 0)"}, nReason: 1},
		{name: "empty output", op: "conv_2d", params: conv(), dst: f32t(0, 12, 16), srcs: []*ops.Tensor{flt, in},
			reasons: []string{"OW or OH <= 0 (OW = 0, OH = 12)"}},
		{name: "input not contiguous", op: "conv_2d", params: conv(), dst: out, srcs: []*ops.Tensor{flt, gapped(ops.F32, 16, 12, 16)},
			reasons: []string{"src1 is not contiguous"}, nReason: 1},
		{name: "filter not contiguous", op: "conv_2d", params: conv(), dst: out, srcs: []*ops.Tensor{gapped(ops.F32, 3, 3, 16, 16), in},
			reasons: []string{"src0 is not contiguous"}, nReason: 1},
		// Two K-chunks (Cin 32 of 820224-byte tiles do not fit the budget)
		// with 256 output tiles: fine with 2048 workers (OW % 16 == 0) ...
		{name: "two chunks, 256 tiles, unstaged", op: "conv_2d", params: conv(), dst: f32t(64, 64, 16),
			srcs: []*ops.Tensor{f32t(3, 3, 32, 16), f32t(64, 64, 32)}, kernel: "conv_2d_f32_me"},
		// ... too many for the 64 of the staged path (OW = 63).
		{name: "two chunks, 256 tiles, staged", op: "conv_2d", params: conv(), dst: f32t(63, 64, 16),
			srcs:    []*ops.Tensor{f32t(3, 3, 32, 16), f32t(63, 64, 32)},
			reasons: []string{"L2 scratchpad budget: 2 K-chunks and OH*ceil(OW/16)*Cout/16 = 256 output tiles > 64"}, nReason: 1},
		// One chunk: any number of tiles.
		{name: "one chunk, many tiles", op: "conv_2d", params: conv(), dst: f32t(63, 64, 16),
			srcs: []*ops.Tensor{f32t(3, 3, 16, 16), f32t(63, 64, 16)}, kernel: "conv_2d_f32_me"},
	})
}

func TestConv2DBudget(t *testing.T) {
	tests := []struct {
		name                     string
		kw, kh, cin, cout, h, p1 int64
		ow, oh                   int64
		chunks, tiles, maxTiles  int64
	}{
		{name: "fits", kw: 3, kh: 3, cin: 16, cout: 16, h: 12, p1: 1, ow: 16, oh: 12, chunks: 1, tiles: 12, maxTiles: 2048},
		{name: "two chunks", kw: 3, kh: 3, cin: 32, cout: 16, h: 64, p1: 1, ow: 64, oh: 64, chunks: 2, tiles: 256, maxTiles: 2048},
		{name: "staged", kw: 3, kh: 3, cin: 32, cout: 16, h: 64, p1: 1, ow: 63, oh: 64, chunks: 2, tiles: 256, maxTiles: 64},
		// Cin 48 = 3 tiles: a chunk of 1 tile (3 does not divide into 2).
		{name: "three chunks", kw: 3, kh: 3, cin: 48, cout: 32, h: 64, p1: 1, ow: 64, oh: 64, chunks: 3, tiles: 512, maxTiles: 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n, mx := conv2dBudget(tt.kw, tt.kh, tt.cin, tt.cout, tt.h, tt.p1, tt.ow, tt.oh)
			if c != tt.chunks || n != tt.tiles || mx != tt.maxTiles {
				t.Errorf("conv2dBudget = %d chunks, %d tiles, max %d; want %d, %d, %d", c, n, mx, tt.chunks, tt.tiles, tt.maxTiles)
			}
		})
	}
}

func TestRulesSSMConv(t *testing.T) {
	sx, cw, out := f32t(6, 64, 2), f32t(4, 64), f32t(64, 3, 2)
	runRest(t, []restCase{
		{name: "ok", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{sx, cw}, kernel: "ssm_conv_f32", tensors: []string{"src0", "src1", "dst"}},
		{name: "sx rows gapped", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{gapped(ops.F32, 6, 64, 2), cw},
			reasons: []string{"src0.nb1 != ne0*4 (nb1 = 48, ne0*4 = 24)"}, nReason: 1},
		{name: "sx nb2 gapped is fine", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{func() *ops.Tensor { x := f32t(6, 64, 2); x.Nb[2] *= 2; return x }(), cw},
			kernel: "ssm_conv_f32"},
		{name: "c nb0", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{sx, spread(ops.F32, 4, 64)},
			reasons: []string{"src1.nb0 != 4 (nb0 = 8)", "src1.nb1 != ne0*4 (nb1 = 32, ne0*4 = 16)"}, nReason: 2},
		{name: "dst not contiguous", op: "ssm_conv", dst: gapped(ops.F32, 64, 3, 2), srcs: []*ops.Tensor{sx, cw},
			reasons: []string{"dst is not contiguous"}, nReason: 1},
		{name: "d_inner", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{sx, f32t(4, 32)},
			reasons: []string{"src1.ne1 != src0.ne1 (32 != 64)"}, nReason: 1},
		{name: "dst.ne0", op: "ssm_conv", dst: f32t(32, 3, 2), srcs: []*ops.Tensor{sx, cw},
			reasons: []string{"dst.ne0 != src0.ne1 (32 != 64)"}, nReason: 1},
		{name: "dst.ne1", op: "ssm_conv", dst: f32t(64, 4, 2), srcs: []*ops.Tensor{sx, cw},
			reasons: []string{"dst.ne1 != src0.ne0 - src1.ne0 + 1 (4 != 3)"}, nReason: 1},
		{name: "dst.ne2", op: "ssm_conv", dst: f32t(64, 3, 1), srcs: []*ops.Tensor{sx, cw},
			reasons: []string{"dst.ne2 != src0.ne2 (1 != 2)"}, nReason: 1},
		{name: "f16 c", op: "ssm_conv", dst: out, srcs: []*ops.Tensor{sx, ops.New(ops.F16, 4, 64)},
			reasons: []string{"src1 type f16 is not f32"}},
	})
}

func TestRulesSSMScan(t *testing.T) {
	type scan struct{ s, x, dt, a, b, c, ids *ops.Tensor }
	base := func() scan {
		return scan{f32t(16, 8, 4, 3), f32t(8, 4, 3, 2), f32t(4, 3, 2), f32t(1, 4), f32t(16, 2, 3, 2), f32t(16, 2, 3, 2), ops.New(ops.I32, 2)}
	}
	mk := func(name string, edit func(*scan), k int64, kernel string, reasons ...string) restCase {
		s := base()
		if edit != nil {
			edit(&s)
		}
		tc := restCase{name: name, op: "ssm_scan", params: ops.Params{"K": k}, dst: f32t(192 + 16*8*4*2*k),
			srcs: []*ops.Tensor{s.s, s.x, s.dt, s.a, s.b, s.c, s.ids}, kernel: kernel, reasons: reasons}
		if kernel != "" {
			tc.scalars = map[string]float64{"K": float64(k)}
			tc.opParams = []int32{int32(k)}
			tc.tensors = []string{"src0", "src1", "src2", "src3", "src4", "src5", "src6", "dst"}
		} else {
			tc.nReason = len(reasons)
		}
		return tc
	}
	runRest(t, []restCase{
		mk("mamba2", nil, 1, "ssm_scan_f32"),
		mk("mamba2 K 2", nil, 2, "ssm_scan_f32"),
		mk("mamba1 A", func(s *scan) { s.a = f32t(16, 4) }, 1, "ssm_scan_f32"),
		mk("x rows with a gap after dim 1 is fine", func(s *scan) { s.x.Nb[2] *= 2; s.x.Nb[3] *= 2 }, 1, "ssm_scan_f32"),
		mk("ids f32", func(s *scan) { s.ids = f32t(2) }, 1, "", "src6 type f32 is not i32"),
		mk("A.ne0", func(s *scan) { s.a = f32t(3, 4) }, 1, "", "A.ne0 is neither 1 nor d_state (A.ne0 = 3, d_state = 16)"),
		mk("A.ne1", func(s *scan) { s.a = f32t(1, 2) }, 1, "", "A.ne1 != x.ne1 (n_head) (2 != 4)"),
		mk("n_group", func(s *scan) { s.b, s.c = f32t(16, 3, 3, 2), f32t(16, 3, 3, 2) }, 1, "", "n_head % n_group != 0 (n_head = 4, n_group = 3)"),
		mk("B and C", func(s *scan) { s.c = f32t(16, 1, 3, 2) }, 1, "", "B and C differ in shape"),
		mk("dt tokens", func(s *scan) { s.dt = f32t(4, 2, 2) }, 1, "", "x.ne2 != dt.ne1 (n_t) (3 != 2)"),
		mk("dt seqs", func(s *scan) { s.dt = f32t(4, 3, 1) }, 1, "", "x.ne3 != dt.ne2 (n_seqs) (2 != 1)"),
		mk("s d_state", func(s *scan) { s.s = f32t(8, 8, 4, 3) }, 1, "", "s.ne0 != B.ne0 (d_state) (8 != 16)"),
		mk("s head_dim", func(s *scan) { s.s = f32t(16, 4, 4, 3) }, 1, "", "s.ne1 != x.ne0 (head_dim) (4 != 8)"),
		mk("s n_head", func(s *scan) { s.s = f32t(16, 8, 2, 3) }, 1, "", "s.ne2 != x.ne1 (n_head) (2 != 4)"),
		mk("B tokens", func(s *scan) { s.b, s.c = f32t(16, 2, 2, 2), f32t(16, 2, 2, 2) }, 1, "", "B.ne2 != x.ne2 (n_t) (2 != 3)"),
		mk("B seqs", func(s *scan) { s.b, s.c = f32t(16, 2, 3, 1), f32t(16, 2, 3, 1) }, 1, "", "B.ne3 != x.ne3 (n_seqs) (1 != 2)"),
		mk("ids count", func(s *scan) { s.ids = ops.New(ops.I32, 3) }, 1, "", "ids.ne0 != x.ne3 (n_seqs) (3 != 2)"),
		mk("x rows gapped", func(s *scan) { s.x = gapped(ops.F32, 8, 4, 3, 2) }, 1, "", "src1.nb1 != ne0*4 (nb1 = 64, ne0*4 = 32)"),
		mk("B nb0", func(s *scan) { s.b = spread(ops.F32, 16, 2, 3, 2) }, 1, "", "src4.nb0 != 4 (nb0 = 8)", "src4.nb1 != ne0*4 (nb1 = 128, ne0*4 = 64)"),
		mk("s not contiguous", func(s *scan) { s.s = gapped(ops.F32, 16, 8, 4, 3) }, 1, "", "src0 is not contiguous"),
		mk("dt not contiguous", func(s *scan) { s.dt = gapped(ops.F32, 4, 3, 2) }, 1, "", "src2 is not contiguous"),
		mk("A not contiguous", func(s *scan) { s.a = gapped(ops.F32, 1, 4) }, 1, "", "src3 is not contiguous"),
	})
}

func TestRulesRWKV(t *testing.T) {
	tok := func(s int64) *ops.Tensor { return f32t(s, 2, 4) }
	wkv6 := func(s int64, edit func([]*ops.Tensor)) []*ops.Tensor {
		srcs := []*ops.Tensor{tok(s), tok(s), tok(s), f32t(s, 2), tok(s), f32t(s*s*2, 2)}
		if edit != nil {
			edit(srcs)
		}
		return srcs
	}
	wkv7 := func(s int64, edit func([]*ops.Tensor)) []*ops.Tensor {
		srcs := []*ops.Tensor{tok(s), tok(s), tok(s), tok(s), tok(s), tok(s), f32t(s*s*2, 2)}
		if edit != nil {
			edit(srcs)
		}
		return srcs
	}
	sizes := map[string]float64{"C": 32, "H": 2, "S": 16, "T": 4, "n_seqs": 2}
	runRest(t, []restCase{
		{name: "wkv6", op: "rwkv_wkv6", dst: f32t(32, 36), srcs: wkv6(16, nil), kernel: "rwkv_wkv6_f32", scalars: sizes,
			pointers: map[string]int{"k": 0, "v": 1, "r": 2, "tf": 3, "td": 4, "state_in": 5, "dst": -1}},
		{name: "wkv6 head 12", op: "rwkv_wkv6", dst: f32t(24, 28), srcs: wkv6(12, nil),
			reasons: []string{"head size (k.ne0) % 8 != 0 (head size (k.ne0) = 12)"}, nReason: 1},
		{name: "wkv6 tf f16", op: "rwkv_wkv6", dst: f32t(32, 36), srcs: wkv6(16, func(s []*ops.Tensor) { s[3] = ops.New(ops.F16, 16, 2) }),
			reasons: []string{"tf type f16 is not f32"}, nReason: 1},
		{name: "wkv6 state gapped", op: "rwkv_wkv6", dst: f32t(32, 36), srcs: wkv6(16, func(s []*ops.Tensor) { s[5] = gapped(ops.F32, 512, 2) }),
			reasons: []string{"state is not contiguous"}, nReason: 1},
		{name: "wkv6 r gapped", op: "rwkv_wkv6", dst: f32t(32, 36), srcs: wkv6(16, func(s []*ops.Tensor) { s[2] = gapped(ops.F32, 16, 2, 4) }),
			reasons: []string{"r is not contiguous"}, nReason: 1},
		{name: "wkv7", op: "rwkv_wkv7", dst: f32t(32, 36), srcs: wkv7(16, nil), kernel: "rwkv_wkv7_f32", scalars: sizes,
			pointers: map[string]int{"r": 0, "w": 1, "k": 2, "v": 3, "a": 4, "b": 5, "state_in": 6, "dst": -1}},
		{name: "wkv7 head 4", op: "rwkv_wkv7", dst: f32t(8, 12), srcs: wkv7(4, nil),
			reasons: []string{"head size (k.ne0) % 8 != 0 (head size (k.ne0) = 4)"}, nReason: 1},
		{name: "wkv7 b gapped", op: "rwkv_wkv7", dst: f32t(32, 36), srcs: wkv7(16, func(s []*ops.Tensor) { s[5] = gapped(ops.F32, 16, 2, 4) }),
			reasons: []string{"b is not contiguous"}, nReason: 1},
		{name: "wkv7 w f16", op: "rwkv_wkv7", dst: f32t(32, 36), srcs: wkv7(16, func(s []*ops.Tensor) { s[1] = ops.New(ops.F16, 16, 2, 4) }),
			reasons: []string{"w type f16 is not f32"}, nReason: 1},
	})
}

func TestRulesGatedDeltaNet(t *testing.T) {
	type gdn struct{ q, k, v, g, beta, state *ops.Tensor }
	base := func() gdn {
		return gdn{f32t(16, 2, 3, 2), f32t(16, 2, 3, 2), f32t(16, 4, 3, 2), f32t(1, 4, 3, 2), f32t(1, 4, 3, 2), f32t(16, 16, 4, 2)}
	}
	mk := func(name string, edit func(*gdn), k int64, kernel string, reasons ...string) restCase {
		s := base()
		if edit != nil {
			edit(&s)
		}
		sv, h := s.v.Ne[0], s.v.Ne[1]
		tc := restCase{name: name, op: "gated_delta_net", params: ops.Params{"K": k}, dst: f32t(sv*h, 6+k*sv*2),
			srcs: []*ops.Tensor{s.q, s.k, s.v, s.g, s.beta, s.state}, kernel: kernel, reasons: reasons}
		if kernel == "" {
			tc.nReason = len(reasons)
		} else {
			tc.tensors = []string{"q", "k", "v", "g", "beta", "state_in", "dst"}
			tc.opParams = []int32{int32(k)}
		}
		return tc
	}
	ok := mk("scalar gate", nil, 1, "gated_delta_net_f32")
	ok.scalars = map[string]float64{"S_v": 16, "H": 4, "H_q": 2, "H_k": 2, "n_tokens": 3, "n_seqs": 2, "n_seqs_q": 2, "n_seqs_k": 2,
		"kda": 0, "K": 1, "scale": 0.25}
	kda := mk("kda gate K 2", func(s *gdn) { s.g = f32t(16, 4, 3, 2) }, 2, "gated_delta_net_f32")
	kda.scalars = map[string]float64{"kda": 1, "K": 2}
	runRest(t, []restCase{
		ok, kda,
		mk("q strided heads", func(s *gdn) { s.q = gapped(ops.F32, 16, 2, 3, 2) }, 1, "gated_delta_net_f32"),
		mk("S_v 12", func(s *gdn) {
			s.q, s.k, s.v, s.state = f32t(12, 2, 3, 2), f32t(12, 2, 3, 2), f32t(12, 4, 3, 2), f32t(12, 12, 4, 2)
		}, 1, "", "S_v % 8 != 0 (S_v = 12)"),
		mk("g.ne0 4", func(s *gdn) { s.g = f32t(4, 4, 3, 2) }, 1, "", "g.ne0 is neither 1 nor S_v (g.ne0 = 4, S_v = 16)"),
		mk("beta.ne0 2", func(s *gdn) { s.beta = f32t(2, 4, 3, 2) }, 1, "", "beta.ne0 != 1 (ne0 = 2)"),
		mk("q nb0", func(s *gdn) { s.q = spread(ops.F32, 16, 2, 3, 2) }, 1, "", "q.nb0 != 4 (nb0 = 8)"),
		mk("v nb0", func(s *gdn) { s.v = spread(ops.F32, 16, 4, 3, 2) }, 1, "", "v.nb0 != 4 (nb0 = 8)"),
		mk("g not contiguous", func(s *gdn) { s.g = gapped(ops.F32, 1, 4, 3, 2) }, 1, "", "g is not contiguous"),
		mk("beta not contiguous", func(s *gdn) { s.beta = gapped(ops.F32, 1, 4, 3, 2) }, 1, "", "beta is not contiguous"),
		mk("state not contiguous", func(s *gdn) { s.state = gapped(ops.F32, 16, 16, 4, 2) }, 1, "", "state is not contiguous"),
		mk("state f16", func(s *gdn) { s.state = ops.New(ops.F16, 16, 16, 4, 2) }, 1, "", "state type f16 is not f32"),
	})
}

// TestRulesPadShortParams: lp/rp with fewer than 4 entries (a raw node, or
// a manifest-era case) neither panics nor hides a dim-0 pad.
func TestRulesPadShortParams(t *testing.T) {
	runRest(t, []restCase{
		{name: "lp only", op: "pad", params: ops.Params{"lp": []int64{1}}, dst: f32t(17, 2), srcs: []*ops.Tensor{f32t(16, 2)},
			reasons: []string{"lp0 or rp0 != 0 (lp0 = 1, rp0 = 0)"}},
		{name: "rp only", op: "pad", params: ops.Params{"rp": []int64{0, 2}}, dst: f32t(16, 4), srcs: []*ops.Tensor{f32t(16, 2)},
			kernel: "pad_f32", scalars: map[string]float64{"rp[1]": 2, "lp[1]": 0, "rp[3]": 0}},
		{name: "empty", op: "pad", params: ops.Params{"lp": []int64{}, "rp": []int64{}}, dst: f32t(16, 2), srcs: []*ops.Tensor{f32t(16, 2)},
			kernel: "pad_f32"},
		{name: "dst ne0 is checked", op: "pad", params: ops.Params{"rp": []int64{4}}, dst: f32t(20, 2), srcs: []*ops.Tensor{f32t(16, 2)},
			reasons: []string{"ne0 % 16 != 0 and 16 % ne0 != 0 (ne0 = 20)", "lp0 or rp0 != 0 (lp0 = 0, rp0 = 4)"}, nReason: 2},
	})
}

// TestEveryGGMLETOpHasARule: every op of ggml-et's graph_compute switch
// has a rules row, and its check, kernel and layout exist.
func TestEveryGGMLETOpHasARule(t *testing.T) {
	m := abi.Default()
	for op := range ggmlETOps {
		r, ok := ruleFor(op)
		if !ok || r.check == nil || r.kernel == nil {
			t.Errorf("op %s has no complete rules row", op)
		}
	}
	for _, table := range append([]map[ops.Op]opRule{rules}, familyRules...) {
		for op := range table {
			if !ggmlETOps[op] {
				t.Errorf("op %s has a row but is not in ggmlETOps", op)
			}
		}
	}
	for _, k := range []string{"tri_f32", "set_f32", "im2col", "conv_2d_f32_me", "ssm_conv_f32", "ssm_scan_f32", "rwkv_wkv6_f32", "rwkv_wkv7_f32", "gated_delta_net_f32"} {
		if _, ok := m.LayoutFor(k); !ok {
			t.Errorf("kernel %s has no layout", k)
		}
	}
}

// TestRulesRestCatalog runs the new rows through the catalog's graph
// builder with the shapes of testcases/ (source order and param names of
// reference/case-format.md), and encodes every launch.
func TestRulesRestCatalog(t *testing.T) {
	b := newGB(t).
		leaf("m", ops.F32, 16, 16, 2).leaf("big", ops.F32, 64, 4).leaf("sub", ops.F32, 16, 2).
		leaf("img", ops.F32, 16, 12, 16, 1).leaf("w", ops.F32, 3, 3, 16, 16).leaf("wh", ops.F16, 3, 3, 16, 16).
		leaf("sx", ops.F32, 6, 64, 2).leaf("cw", ops.F32, 4, 64).
		leaf("s2", ops.F32, 16, 8, 4, 3).leaf("x2", ops.F32, 8, 4, 3, 2).leaf("dt2", ops.F32, 4, 3, 2).leaf("A2", ops.F32, 1, 4).
		leaf("B2", ops.F32, 16, 2, 3, 2).leaf("C2", ops.F32, 16, 2, 3, 2).leaf("ids", ops.I32, 2).
		leaf("tk", ops.F32, 16, 2, 4).leaf("tf", ops.F32, 16, 2).leaf("st", ops.F32, 512, 2).
		leaf("q", ops.F32, 16, 2, 3, 2).leaf("v", ops.F32, 16, 4, 3, 2).leaf("g", ops.F32, 1, 4, 3, 2).leaf("gs", ops.F32, 16, 16, 4, 2).
		node("tril", "tri", []string{"m"}, map[string]any{"type": "lower_diag"}).
		node("patched", "set", []string{"big", "sub"}, map[string]any{"nb1": 256, "offset": 64, "inplace": true}).
		node("cols", "im2col", []string{"wh", "img"}, map[string]any{"s0": 1, "s1": 1, "p0": 1, "p1": 1, "is_2d": true, "dst_type": "f16"}).
		node("conv", "conv_2d", []string{"w", "img"}, map[string]any{"p0": 1, "p1": 1}).
		node("sc", "ssm_conv", []string{"sx", "cw"}, nil).
		node("scan", "ssm_scan", []string{"s2", "x2", "dt2", "A2", "B2", "C2", "ids"}, map[string]any{"K": 2}).
		node("w6", "rwkv_wkv6", []string{"tk", "tk", "tk", "tf", "tk", "st"}, nil).
		node("w7", "rwkv_wkv7", []string{"tk", "tk", "tk", "tk", "tk", "tk", "st"}, nil).
		node("gdn", "gated_delta_net", []string{"q", "q", "v", "g", "g", "gs"}, nil).
		outputs("tril", "patched", "cols", "conv", "sc", "scan", "w6", "w7", "gdn")
	p := b.build(false)
	want := map[string]string{"tril": "tri_f32", "patched": "set_f32", "cols": "im2col", "conv": "conv_2d_f32_me", "sc": "ssm_conv_f32",
		"scan": "ssm_scan_f32", "w6": "rwkv_wkv6_f32", "w7": "rwkv_wkv7_f32", "gdn": "gated_delta_net_f32"}
	for node, k := range want {
		if s := stepOf(t, p, node); s.Kind != StepLaunch || s.Kernel != k {
			t.Errorf("%s: %s %q, want %s (%q)", node, s.Kind, s.Kernel, k, s.Verdict.Reasons)
		}
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Kind != StepLaunch {
			continue
		}
		raw, err := p.Encode(s, func(base int) uint64 { return 0x4000 * uint64(base+1) })
		if err != nil {
			t.Errorf("step %d %s: %v", i, s.Kernel, err)
			continue
		}
		if _, err := p.Manifest.Decode(s.Layout, raw); err != nil {
			t.Errorf("step %d %s: decode: %v", i, s.Kernel, err)
		}
	}
	// The two RWKV nodes share their token tensor: every pointer of w7
	// but state_in and dst is tk's address.
	s := stepOf(t, p, "w7")
	tk := b.value("tk")
	for f, vi := range s.Pointers {
		if f != "state_in" && f != "dst" && vi != tk {
			t.Errorf("w7 pointer %s -> value %d, want tk (%d)", f, vi, tk)
		}
	}
}

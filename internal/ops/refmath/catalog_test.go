package refmath

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// mustOp runs op through the catalog (Lookup, Normalize, Compute) and
// fails the test on any error.
func mustOp(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	return mustOpWith(t, host.Load(), op, srcs, raw)
}

// mustOpWith is mustOp with the kernel set ks.
func mustOpWith(t *testing.T, ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	y, err := runOpWith(ks, op, srcs, raw)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return y
}

func runOp(op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	return runOpWith(host.Load(), op, srcs, raw)
}

// runOpWith is runOp with the kernel set ks.
func runOpWith(ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	info, ok := ops.Lookup(string(op))
	if !ok {
		return nil, &ops.UnknownOpError{Name: string(op)}
	}
	p, err := info.Normalize(raw)
	if err != nil {
		return nil, err
	}
	return ks.Compute(info, srcs, p)
}

// wantOpError runs op and checks that it fails with a message containing
// every fragment.
func wantOpError(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any, fragments ...string) {
	t.Helper()
	_, err := runOp(op, srcs, raw)
	opstest.WantInputError(t, string(op), err, fragments...)
}

func TestCatalogRowsComplete(t *testing.T) {
	seen := map[ops.Op]bool{}
	for i := range ops.Catalog {
		info := &ops.Catalog[i]
		t.Run(string(info.Name), func(t *testing.T) {
			if seen[info.Name] {
				t.Fatalf("duplicate row")
			}
			seen[info.Name] = true
			// Only a generator (arange) takes no source.
			if info.Doc == "" || (len(info.Srcs) == 0) != (info.Name == ops.OpArange) || info.MinSrc > len(info.Srcs) {
				t.Fatalf("incomplete row: %+v", info)
			}
			if info.View {
				if info.ViewOf == nil || Ref(info.Name) != nil {
					t.Fatalf("view op needs ViewOf and no Ref")
				}
			} else if info.Infer == nil {
				t.Fatalf("op needs Infer")
			}
			// Ref may be nil only for an op ggml-et does not implement
			// either: Run then says NoHostMathError.
			if !info.View && Ref(info.Name) == nil && !slices.ContainsFunc(ops.HostCatalog, func(h ops.OpInfo) bool { return h.Name == info.Name }) {
				t.Fatalf("op ggml-et implements needs Ref")
			}
			for _, s := range info.Params {
				if s.Doc == "" {
					t.Errorf("param %s has no doc", s.Name)
				}
				if s.Required && s.Default != nil {
					t.Errorf("param %s is required and has a default", s.Name)
				}
				if s.Default != nil {
					if _, err := ops.NormalizeValue(&s, s.Default); err != nil {
						t.Errorf("param %s: default %v does not normalize: %v", s.Name, s.Default, err)
					}
				}
			}
			got, ok := ops.Lookup(strings.ToUpper(string(info.Name)))
			if !ok || got != info {
				t.Fatalf("Lookup(%q) = %v, %v", strings.ToUpper(string(info.Name)), got, ok)
			}
		})
	}
	for _, op := range []ops.Op{ops.OpMulMat, ops.OpAdd, ops.OpSub, ops.OpMul, ops.OpRMSNorm, ops.OpNorm, ops.OpScale, ops.OpSoftMax, ops.OpRope, ops.OpUnary,
		ops.OpGLU, ops.OpGetRows, ops.OpSetRows, ops.OpCpy, ops.OpCont, ops.OpFlashAttnExt, ops.OpView, ops.OpReshape, ops.OpPermute, ops.OpTranspose} {
		if !seen[op] {
			t.Errorf("catalog has no row for %s", op)
		}
	}
	if _, ok := ops.Lookup("conv_9d"); ok {
		t.Errorf("Lookup found an unknown op")
	}
	if e := (&ops.UnknownOpError{Name: "conv_9d"}).Error(); !strings.Contains(e, `"conv_9d"`) || !strings.Contains(e, "rms_norm") {
		t.Errorf("UnknownOpError = %q", e)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		raw     map[string]any
		wantErr string
		check   func(t *testing.T, p ops.Params)
	}{
		{
			name: "rope defaults", info: "rope", raw: map[string]any{"n_dims": 128, "mode": "NEOX", "freq_base": 500000},
			check: func(t *testing.T, p ops.Params) {
				if p.Int("n_dims") != 128 || p.Str("mode") != "neox" || p.F32("freq_base") != 500000 ||
					p.F32("freq_scale") != 1 || p.F32("beta_fast") != 32 || p.F32("beta_slow") != 1 ||
					p.F32("attn_factor") != 1 || p.F32("ext_factor") != 0 || len(p.Ints("sections")) != 4 {
					t.Errorf("normalized = %v", p)
				}
			},
		},
		{
			name: "yaml list and integral float", info: "rope", raw: map[string]any{"n_dims": 64.0, "mode": "imrope", "sections": []any{11, 11, 10, 0}},
			check: func(t *testing.T, p ops.Params) {
				if s := p.Ints("sections"); len(s) != 4 || s[0] != 11 || s[2] != 10 || p.Int("n_dims") != 64 {
					t.Errorf("normalized = %v", p)
				}
			},
		},
		{name: "unknown param", info: "rope", raw: map[string]any{"n_dims": 2, "freqbase": 1.0}, wantErr: `rope: param freqbase: unknown parameter (want n_dims, mode,`},
		{name: "required", info: "rope", raw: map[string]any{}, wantErr: "rope: param n_dims: required"},
		{name: "bad enum", info: "rope", raw: map[string]any{"n_dims": 2, "mode": "sideways"}, wantErr: `unknown value "sideways" (want normal, neox, mrope, vision, imrope)`},
		{name: "float for int", info: "rope", raw: map[string]any{"n_dims": 2.5}, wantErr: "param n_dims: got 2.5 (float64), want an integer"},
		{name: "int overflow", info: "rope", raw: map[string]any{"n_dims": int64(1) << 40}, wantErr: "does not fit in an int32"},
		{name: "short list", info: "rope", raw: map[string]any{"n_dims": 2, "sections": []any{1, 2}}, wantErr: "has 2 entries, want 4"},
		{name: "string for float", info: "rms_norm", raw: map[string]any{"eps": "small"}, wantErr: "want a number"},
		{name: "no params", info: "add", raw: map[string]any{"eps": 1}, wantErr: "the op takes no parameters"},
		{name: "bool", info: "glu", raw: map[string]any{"op": "swiglu", "swapped": "yes"}, wantErr: "want true or false"},
		{name: "type", info: "cpy", raw: map[string]any{"type": "q8_0"}, check: func(t *testing.T, p ops.Params) {
			if p.Type("type") != ops.Q8_0 {
				t.Errorf("type = %v", p.Type("type"))
			}
		}},
		{name: "bad type", info: "cpy", raw: map[string]any{"type": "q3_x"}, wantErr: `unknown type "q3_x"`},
		{name: "unary op list", info: "unary", raw: map[string]any{"op": "xielu"}, wantErr: "want abs, sgn, neg"},
		{name: "eps default", info: "rms_norm", raw: nil, check: func(t *testing.T, p ops.Params) {
			if p.F32("eps") != 1e-6 {
				t.Errorf("eps = %v", p.F32("eps"))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := ops.Lookup(tt.info)
			if !ok {
				t.Fatalf("no op %s", tt.info)
			}
			p, err := info.Normalize(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var pe *ops.ParamError
				if !errors.As(err, &pe) {
					t.Fatalf("err is %T, want *ParamError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

func TestSourceCountAndDestination(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{4}, []float32{1, 2, 3, 4})
	wantOpError(t, ops.OpAdd, []*ops.Tensor{x}, nil, "add: 1 sources, want 2 [a, b]")
	wantOpError(t, ops.OpSoftMax, []*ops.Tensor{x, x, x, x}, nil, "soft_max: 4 sources, want 1 to 3 [x, mask, sinks]")
	wantOpError(t, ops.OpAdd, []*ops.Tensor{x, nil}, nil, "source b is missing")

	info, _ := ops.Lookup("add")
	if err := Run(info, ops.New(ops.F32, 3), []*ops.Tensor{x, x}, ops.Params{}); err == nil || !strings.Contains(err.Error(), "destination is f32 [3, 1, 1, 1], want f32 [4, 1, 1, 1]") {
		t.Errorf("Run with a wrong dst: %v", err)
	}
	short := ops.New(ops.F32, 4)
	short.Buf = short.Buf[:8]
	if err := Run(info, ops.New(ops.F32, 4), []*ops.Tensor{x, short}, ops.Params{}); err == nil || !strings.Contains(err.Error(), "source b needs 16 bytes") {
		t.Errorf("Run with a short source: %v", err)
	}
	// Run writes through a strided destination.
	wide := ops.New(ops.F32, 4, 2)
	dst, _ := ops.View(wide, []int64{4}, nil, 16)
	if err := Run(info, dst, []*ops.Tensor{x, x}, ops.Params{}); err != nil {
		t.Fatal(err)
	}
	opstest.CheckClose(t, wide.ToF32(), []float32{0, 0, 0, 0, 2, 4, 6, 8}, 0)
	v, _ := ops.Lookup("view")
	if err := Run(v, dst, []*ops.Tensor{x}, ops.Params{}); err == nil {
		t.Errorf("Run of a view op did not fail")
	}
}

func TestViewOps(t *testing.T) {
	x := ops.FromF32(ops.F32, []int64{3, 2}, []float32{0, 1, 2, 3, 4, 5})
	tr := mustOp(t, ops.OpTranspose, []*ops.Tensor{x}, nil)
	if tr.Ne != [4]int64{2, 3, 1, 1} {
		t.Fatalf("transpose ne = %v", tr.Ne)
	}
	opstest.CheckClose(t, tr.ToF32(), []float32{0, 3, 1, 4, 2, 5}, 0)
	pm := mustOp(t, ops.OpPermute, []*ops.Tensor{x}, map[string]any{"axes": []any{1, 0, 2, 3}})
	opstest.CheckClose(t, pm.ToF32(), []float32{0, 3, 1, 4, 2, 5}, 0)
	rs := mustOp(t, ops.OpReshape, []*ops.Tensor{x}, map[string]any{"ne": []any{2, 3}})
	if rs.Ne != [4]int64{2, 3, 1, 1} {
		t.Fatalf("reshape ne = %v", rs.Ne)
	}
	vw := mustOp(t, ops.OpView, []*ops.Tensor{x}, map[string]any{"ne": []any{2, 2}, "nb": []any{12}, "offset": 4})
	opstest.CheckClose(t, vw.ToF32(), []float32{1, 2, 4, 5}, 0)
	ct := mustOp(t, ops.OpCont, []*ops.Tensor{tr}, nil)
	if !ct.IsContiguous() {
		t.Fatalf("cont is not contiguous")
	}
	opstest.CheckClose(t, ct.ToF32(), []float32{0, 3, 1, 4, 2, 5}, 0)

	wantOpError(t, ops.OpReshape, []*ops.Tensor{x}, map[string]any{"ne": []any{4}}, "reshape:", "has 4 elements")
	wantOpError(t, ops.OpPermute, []*ops.Tensor{x}, map[string]any{"axes": []any{0, 0, 1, 2}}, "not a permutation")
	wantOpError(t, ops.OpView, []*ops.Tensor{x}, map[string]any{"ne": []any{4, 2}}, "view:", "source buffer has")
	wantOpError(t, ops.OpView, []*ops.Tensor{x}, map[string]any{"ne": []any{1}, "offset": -4}, "negative offset")
}

func TestMulMatRow(t *testing.T) {
	// a [k=3, m=2], b [k=3, n=2]: dst[m, n] = Σ a[k, m]·b[k, n].
	a := ops.FromF32(ops.F32, []int64{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	b := ops.FromF32(ops.F32, []int64{3, 2}, []float32{1, 0, -1, 2, 1, 0})
	y := mustOp(t, ops.OpMulMat, []*ops.Tensor{a, b}, nil)
	if y.Ne != [4]int64{2, 2, 1, 1} || y.Type != ops.F32 {
		t.Fatalf("mul_mat result %s %s", y.Type, y.ShapeString())
	}
	opstest.CheckClose(t, y.ToF32(), []float32{-2, -2, 4, 13}, 1e-6)
	info, _ := ops.Lookup("mul_mat")
	if c := info.Cost(y, []*ops.Tensor{a, b}, nil); c.Flops != 2*3*2*2 || c.Bytes != 16+24+24 {
		t.Errorf("cost = %+v", c)
	}
	wantOpError(t, ops.OpMulMat, []*ops.Tensor{a, ops.New(ops.F32, 4, 2)}, nil, "a.ne0 = 3 != b.ne0 = 4")
	wantOpError(t, ops.OpMulMat, []*ops.Tensor{ops.New(ops.F32, 3, 2, 2), ops.New(ops.F32, 3, 2, 3)}, nil, "b.ne2 = 3 is not a multiple of a.ne2 = 2")
	wantOpError(t, ops.OpMulMat, []*ops.Tensor{a, ops.New(ops.I32, 3, 2)}, nil, "b is i32, want f32 or f16")
	if c := (&ops.Catalog[1]).Cost(y, []*ops.Tensor{y, y}, nil); c.Flops != 0 {
		t.Errorf("add has flops %d, want 0 (reported as bandwidth)", c.Flops)
	}
}

// maxFuzzElems bounds the sources and results FuzzCatalog computes: a
// block-quantized source is 1 or 2 blocks of up to 256 values per row, so
// its shapes reach 512x8x8x8 and one reference op (out_prod's per-row
// dequantization) took tens of ms, starving the fuzzer. Every op's
// branches are reached with fewer elements, and FuzzCatalog lowers
// refMinWork so that small ops still split across refParallel's workers.
const maxFuzzElems = 1 << 13

// FuzzCatalog builds random sources and params for a random op and checks
// that the op either fails with an error or produces a result of the
// inferred shape — never a panic.
func FuzzCatalog(f *testing.F) {
	f.Add(uint8(1), []byte{4, 2, 1, 1, 4, 1, 1, 1}, []byte{0, 0, 0}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(9), []byte{8, 2, 3, 1, 3, 1, 1, 1, 4, 1, 1, 1}, []byte{0, 5, 0}, []byte{4, 1, 0, 0, 2, 3, 1, 1})
	f.Add(uint8(16), []byte{32, 3, 4, 1, 32, 5, 2, 1, 16, 5, 2, 1, 5, 3, 1, 1}, []byte{0, 1, 1, 1}, []byte{1, 0, 0, 9})
	f.Add(uint8(12), []byte{64, 4, 1, 1, 3, 1, 1, 1}, []byte{3, 5}, []byte{7, 0, 255, 1})
	defer func(w int64) { cpu.RefMinWork = w }(cpu.RefMinWork)
	cpu.RefMinWork = 1 << 9 // see maxFuzzElems
	f.Fuzz(func(t *testing.T, opIdx uint8, dims, types, vals []byte) {
		info := &ops.Catalog[int(opIdx)%len(ops.Catalog)]
		byteAt := func(b []byte, i int) byte {
			if len(b) == 0 {
				return 0
			}
			return b[i%len(b)]
		}
		nsrc := info.MinSrc + int(byteAt(vals, 0))%(len(info.Srcs)-info.MinSrc+1)
		// Source bytes are vals[(j+i) % len(vals)] % 7 (small ints, small
		// floats, f16 values), laid out by copying this pattern: a loop
		// per byte, instrumented, cost more than most ops on 64K elements.
		pat := make([]byte, len(vals))
		for k, v := range vals {
			pat[k] = v % 7
		}
		srcs := make([]*ops.Tensor, nsrc)
		for i := range srcs {
			typ := ops.Types[int(byteAt(types, i))%len(ops.Types)]
			ne := make([]int64, 4)
			for d := range ne {
				ne[d] = int64(byteAt(dims, 4*i+d) % 9)
			}
			if typ.BlockSize() > 1 {
				ne[0] = int64(typ.BlockSize()) * (ne[0] % 3)
			}
			if ne[0]*ne[1]*ne[2]*ne[3] > maxFuzzElems {
				return // see maxFuzzElems
			}
			x := ops.New(typ, ne...)
			if len(pat) > 0 {
				b := x.Buf[copy(x.Buf, pat[i%len(pat):]):]
				for len(b) > 0 {
					b = b[copy(b, pat):]
				}
			}
			srcs[i] = x
		}
		raw := map[string]any{}
		for i, s := range info.Params {
			v := byteAt(vals, i+1)
			switch s.Kind {
			case ops.KindFloat:
				raw[s.Name] = float64(int8(v)) / 8
			case ops.KindInt:
				raw[s.Name] = int64(v % 20)
			case ops.KindBool:
				raw[s.Name] = v%2 == 1
			case ops.KindEnum:
				raw[s.Name] = s.Enum[int(v)%len(s.Enum)]
			case ops.KindType:
				raw[s.Name] = ops.Types[int(v)%len(ops.Types)].String()
			case ops.KindInts:
				n := s.MinLen + int(v)%(s.MaxLen-s.MinLen+1)
				list := make([]any, n)
				for j := range list {
					list[j] = int(byteAt(vals, i+j+2) % 9)
				}
				raw[s.Name] = list
			}
		}
		p, err := info.Normalize(raw)
		if err != nil {
			return
		}
		if _, ne, err := info.Shape(srcs, p); err == nil && !info.View && ne[0]*ne[1]*ne[2]*ne[3] > maxFuzzElems {
			return // see maxFuzzElems
		}
		y, err := Compute(info, srcs, p)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error")
			}
			return
		}
		if info.View {
			return
		}
		typ, ne, _ := info.Shape(srcs, p)
		if y.Type != typ || y.Ne != ne {
			t.Fatalf("result %s %s, inferred %s %v", y.Type, y.ShapeString(), typ, ne)
		}
	})
}

package ref

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestKernelTri(t *testing.T) {
	r := newRand(5)
	x := randTensor(r, ops.F32, 16, 16, 2)
	m := abi.Default()
	for _, name := range ops.TriTypes {
		t.Run(name, func(t *testing.T) {
			v, _ := m.TriValue(name)
			kcase{
				name: name, kernel: "tri_f32", in: []kin{{"src0", x}},
				set:  func(vs *abi.Values) { vs.SetInt("tri_type", int64(v)) },
				want: refOut(t, ops.OpTri, []*ops.Tensor{x}, map[string]any{"type": name}),
			}.run(t)
		})
	}
	t.Run("bad tri_type", func(t *testing.T) {
		e := newEnv(t)
		var v abi.Values
		v.SetTensor("src0", e.desc(x, e.upload(x), ""))
		dst := ops.New(ops.F32, 16, 16, 2)
		v.SetTensor("dst", e.desc(dst, e.upload(dst), ""))
		v.SetInt("tri_type", 7)
		se := e.wantFault("tri_f32", e.encode("tri_f32", v), CodeUserError)
		if !strings.Contains(se.Message, "tri_type 7 is not a GGML_TRI_TYPE value") {
			t.Errorf("message %q", se.Message)
		}
	})
}

// wkvCase uploads the sources of an RWKV kernel, fills its pointers and
// sizes, and returns the params, the dst and its address.
type wkvCase struct {
	e      *env
	v      abi.Values
	dst    *ops.Tensor
	data   uint64
	srcs   []*ops.Tensor
	kernel string
}

func newWKV(t *testing.T, kernel string, fields []string, srcs []*ops.Tensor, s, h, tok, nSeqs int64) *wkvCase {
	e := newEnv(t)
	c := &wkvCase{e: e, srcs: srcs, kernel: kernel}
	for i, f := range fields {
		c.v.SetUint(f, e.upload(srcs[i]))
	}
	c.dst = ops.New(ops.F32, s*h, tok+s*nSeqs)
	c.data = e.upload(c.dst)
	c.v.SetUint("dst", c.data)
	for k, x := range map[string]int64{"C": s * h, "H": h, "S": s, "T": tok, "n_seqs": nSeqs} {
		c.v.SetInt(k, x)
	}
	return c
}

func TestKernelWKV(t *testing.T) {
	r := newRand(6)
	const s, h, tok, nSeqs = 16, 2, 4, 2
	f := func(ne ...int64) *ops.Tensor { return randTensor(r, ops.F32, ne...) }
	w6 := []*ops.Tensor{f(s, h, tok), f(s, h, tok), f(s, h, tok), f(s, h), f(s, h, tok), f(s*s*h, nSeqs)}
	w7 := []*ops.Tensor{f(s, h, tok), f(s, h, tok), f(s, h, tok), f(s, h, tok), f(s, h, tok), f(s, h, tok), f(s*s*h, nSeqs)}
	f6 := []string{"k", "v", "r", "tf", "td", "state_in"}
	f7 := []string{"r", "w", "k", "v", "a", "b", "state_in"}
	tests := []struct {
		name, kernel string
		fields       []string
		srcs         []*ops.Tensor
		op           ops.Op
	}{
		{"rwkv_wkv6_f32", "rwkv_wkv6_f32", f6, w6, ops.OpRWKVWKV6},
		{"rwkv_wkv7_f32", "rwkv_wkv7_f32", f7, w7, ops.OpRWKVWKV7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newWKV(t, tt.kernel, tt.fields, tt.srcs, s, h, tok, nSeqs)
			c.e.mustLaunch(tt.kernel, c.e.encode(tt.kernel, c.v))
			sameBits(t, c.e.download(c.dst, c.data), refOut(t, tt.op, tt.srcs, nil))
		})
		faults := []struct {
			name string
			edit func(v *abi.Values)
			code string
			msg  string
		}{
			{"C", func(v *abi.Values) { v.SetInt("C", 31) }, CodeUserError, "C = 31, want S*H = 16*2"},
			{"n_seqs", func(v *abi.Values) { v.SetInt("n_seqs", 3) }, CodeUserError, "T = 4 tokens do not split into n_seqs = 3"},
			{"H 0", func(v *abi.Values) { v.SetInt("H", 0) }, CodeUserError, "H = 0 is out of range"},
			// T too large: the per-token inputs reach past their allocations.
			{"T", func(v *abi.Values) { v.SetInt("T", 8); v.SetInt("n_seqs", 2) }, "", ""},
			{"NULL", func(v *abi.Values) { v.SetUint(tt.fields[0], 0) }, CodeException, "is NULL"},
		}
		for _, ft := range faults {
			t.Run(tt.name+"/fault "+ft.name, func(t *testing.T) {
				c := newWKV(t, tt.kernel, tt.fields, tt.srcs, s, h, tok, nSeqs)
				ft.edit(&c.v)
				serrs := c.e.launch(tt.kernel, c.e.encode(tt.kernel, c.v))
				if len(serrs) != 1 {
					t.Fatalf("got %d stream errors %v, want 1", len(serrs), serrs)
				}
				if ft.code != "" && serrs[0].Code != ft.code {
					t.Errorf("code %s, want %s (%s)", serrs[0].Code, ft.code, serrs[0].Message)
				}
				if !strings.Contains(serrs[0].Message, ft.msg) {
					t.Errorf("message %q, want %q", serrs[0].Message, ft.msg)
				}
			})
		}
	}
}

func TestKernelGatedDeltaNet(t *testing.T) {
	r := newRand(7)
	f := func(ne ...int64) *ops.Tensor { return randTensor(r, ops.F32, ne...) }
	q, k, v := f(16, 2, 3, 2), f(16, 2, 3, 2), f(16, 4, 3, 2)
	g, gk, beta, state := f(1, 4, 3, 2), f(16, 4, 3, 2), f(1, 4, 3, 2), f(16, 16, 4, 2)
	sizes := func(vs *abi.Values, kda, slots int64) {
		for name, x := range map[string]int64{"S_v": 16, "H": 4, "H_q": 2, "H_k": 2, "n_tokens": 3, "n_seqs": 2, "n_seqs_q": 2, "n_seqs_k": 2, "kda": kda, "K": slots} {
			vs.SetInt(name, x)
		}
		vs.SetFloat("scale", 0.25)
	}
	fields := []string{"q", "k", "v", "g", "beta", "state_in"}
	in := func(gate *ops.Tensor) []kin {
		srcs := []*ops.Tensor{q, k, v, gate, beta, state}
		out := make([]kin, len(srcs))
		for i, s := range srcs {
			out[i] = kin{fields[i], s}
		}
		return out
	}
	cases := []kcase{
		{name: "scalar gate", kernel: "gated_delta_net_f32", in: in(g), set: func(vs *abi.Values) { sizes(vs, 0, 1) },
			want: refOut(t, ops.OpGatedDeltaNet, []*ops.Tensor{q, k, v, g, beta, state}, map[string]any{"K": 1})},
		{name: "kda K 2", kernel: "gated_delta_net_f32", in: in(gk), set: func(vs *abi.Values) { sizes(vs, 1, 2) },
			want: refOut(t, ops.OpGatedDeltaNet, []*ops.Tensor{q, k, v, gk, beta, state}, map[string]any{"K": 2})},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
	// The kernel walks the scalar sizes: kda = 0 with a per-channel g
	// reads only g's first channel, as the device would.
	t.Run("kda 0 reads one channel", func(t *testing.T) {
		g0 := ops.New(ops.F32, 1, 4, 3, 2)
		for i3 := range int64(2) {
			for i2 := range int64(3) {
				for i1 := range int64(4) {
					g0.SetF32(0, i1, i2, i3, gk.F32(0, i1, i2, i3))
				}
			}
		}
		kcase{name: "kda0", kernel: "gated_delta_net_f32", in: in(gk), set: func(vs *abi.Values) { sizes(vs, 0, 1) },
			want: refOut(t, ops.OpGatedDeltaNet, []*ops.Tensor{q, k, v, g0, beta, state}, map[string]any{"K": 1})}.run(t)
	})
	faults := []struct {
		name string
		edit func(vs *abi.Values)
		msg  string
	}{
		{"scale", func(vs *abi.Values) { vs.SetFloat("scale", 1) }, "scale = 1, want 1/sqrtf(S_v) = 0.25"},
		{"kda 2", func(vs *abi.Values) { vs.SetInt("kda", 2) }, "kda = 2, want 0 or 1"},
		{"K 0", func(vs *abi.Values) { vs.SetInt("K", 0) }, "K = 0 is out of range"},
		{"K 3", func(vs *abi.Values) { vs.SetInt("K", 3) }, "want [S_v*H, n_tokens*n_seqs + K*S_v*n_seqs]"},
		{"H too large", func(vs *abi.Values) { vs.SetInt("H", 8) }, "runs past the end of the allocation"},
		{"S_v 0", func(vs *abi.Values) { vs.SetInt("S_v", 0) }, "S_v = 0 is out of range"},
	}
	for _, ft := range faults {
		t.Run("fault "+ft.name, func(t *testing.T) {
			e := newEnv(t)
			var vs abi.Values
			for _, x := range in(g) {
				vs.SetTensor(x.field, e.desc(x.t, e.upload(x.t), ""))
			}
			dst := ops.New(ops.F32, 64, 6+32)
			vs.SetTensor("dst", e.desc(dst, e.upload(dst), ""))
			sizes(&vs, 0, 1)
			ft.edit(&vs)
			serrs := e.launch("gated_delta_net_f32", e.encode("gated_delta_net_f32", vs))
			if len(serrs) != 1 || !strings.Contains(serrs[0].Message, ft.msg) {
				t.Fatalf("stream errors %v, want one containing %q", serrs, ft.msg)
			}
		})
	}
}

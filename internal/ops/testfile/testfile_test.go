package testfile

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

const llamaFile = "../../../testcases/test-files/llama_layer_small.txt"

// words builds the 16 op_params words from index → value (floats given
// as float32 values, encoded independently of the decoder).
func words(kv map[int]any) string {
	var w [16]int32
	for i, v := range kv {
		switch x := v.(type) {
		case int:
			w[i] = int32(x)
		case float32:
			w[i] = int32(math.Float32bits(x))
		}
	}
	s := "16"
	for _, x := range w {
		s += fmt.Sprintf(" %d", x)
	}
	return s
}

func parseOne(t *testing.T, line string) *graph.Case {
	t.Helper()
	cs, errs := Parse("t.txt", []byte(line+"\n"), abi.Default())
	if len(errs) > 0 || len(cs) != 1 {
		t.Fatalf("Parse(%q): %d cases, errors %v", line, len(cs), errs)
	}
	return cs[0]
}

func TestParseLlamaLayerFile(t *testing.T) {
	b, err := os.ReadFile(llamaFile)
	if err != nil {
		t.Fatal(err)
	}
	cs, errs := Parse("llama.txt", b, abi.Default())
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if n := strings.Count(string(b), "\n"); len(cs) != n {
		t.Fatalf("%d cases from %d lines", len(cs), n)
	}
	want := map[string]bool{}
	for _, c := range cs {
		want[c.OpDesc] = true
	}
	for _, op := range []string{"GET_ROWS", "RMS_NORM", "MUL", "MUL_MAT", "ROPE", "SET_ROWS", "FLASH_ATTN_EXT", "SOFT_MAX", "ADD", "SWIGLU", "SILU", "CPY"} {
		if !want[op] {
			t.Errorf("the test file has no %s line", op)
		}
	}
	c := cs[1]
	if c.Name != "llama.txt:2 RMS_NORM norm-0" {
		t.Errorf("name %q", c.Name)
	}
	if got := c.Nodes[0].Params.F32("eps"); got != float32(1e-5) {
		t.Errorf("eps = %v, want float32(1e-5)", got)
	}
	// SET_ROWS: ggml's src = [rows, ids, cache]; et's [dst, src, idx]. The
	// node name is the first token of "cache_k_l0 (view)".
	sr := cs[7]
	if sr.OpDesc != "SET_ROWS" || sr.Nodes[0].Name != "cache_k_l0" || strings.Join(sr.Nodes[0].Src, ",") != "src2,src0,src1" {
		t.Errorf("set_rows case %q nodes %+v", sr.Name, sr.Nodes)
	}
}

func TestVarsAsTestBackendOps(t *testing.T) {
	// A rope line: the display is test_generic_op's vars(), non-zero
	// op_params only, the strided source with its nb.
	base := float32(10000)
	line := "48 0 64 4 8 1 " + words(map[int]any{1: 64, 2: 2, 5: base, 6: float32(1), 8: float32(1)}) +
		" 2 0 64 4 8 1 4 512 256 8192 26 8 1 1 1 4 32 32 32 Qcur-0 (view)"
	c := parseOne(t, line)
	want := "name=Qcur-0,type=f32,ne=[64,4,8,1],op_params=[1:64,2:2,5:1176256512,6:1065353216,8:1065353216],sources=f32[64,4,8,1]nb[4,512,256,8192],i32[8,1,1,1]"
	if c.Vars != want {
		t.Errorf("vars\n got %s\nwant %s", c.Vars, want)
	}
	if c.OpDesc != "ROPE" || c.Name != "t.txt:1 ROPE Qcur-0" {
		t.Errorf("op desc %q name %q", c.OpDesc, c.Name)
	}
	n := c.Node("Qcur-0")
	if n.Params.Str("mode") != "neox" || n.Params.Int("n_dims") != 64 || n.Params.F32("freq_base") != base {
		t.Errorf("rope params %v", n.Params)
	}
	// Without a name ("-") the display starts at type=.
	c = parseOne(t, "91 0 8 1 1 1 "+words(map[int]any{0: 10})+" 1 0 8 1 1 1 0 0 0 0 -")
	if c.Vars != "type=f32,ne=[8,1,1,1],op_params=[0:10],sources=f32[8,1,1,1]" || c.OpDesc != "SILU" {
		t.Errorf("unary: %q %q", c.OpDesc, c.Vars)
	}
	if c.Nodes[0].Name != "out" || c.Nodes[0].Params.Str("op") != "silu" {
		t.Errorf("unary node %+v", c.Nodes[0])
	}
}

func TestParamsDecoded(t *testing.T) {
	for _, tc := range []struct {
		line  string
		check func(p ops.Params) bool
	}{
		{"32 0 8 2 1 1 " + words(map[int]any{0: float32(0.5), 1: float32(-2)}) + " 1 0 8 2 1 1 4 32 64 64 s",
			func(p ops.Params) bool { return p.F32("scale") == 0.5 && p.F32("bias") == -2 }},
		{"46 0 8 2 1 1 " + words(map[int]any{0: float32(0.125), 1: float32(8)}) + " 2 0 8 2 1 1 4 32 64 64 0 8 2 1 1 4 32 64 64 sm",
			func(p ops.Params) bool { return p.F32("scale") == 0.125 && p.F32("max_bias") == 8 }},
		{"100 0 8 2 1 1 " + words(map[int]any{0: 3, 2: float32(1.5), 3: float32(6)}) + " 2 0 8 2 1 1 4 32 64 64 0 8 2 1 1 4 32 64 64 g",
			func(p ops.Params) bool {
				return p.Str("op") == "swiglu_oai" && !p.Bool("swapped") && p.F32("alpha") == 1.5 && p.F32("limit") == 6
			}},
		{"50 0 8 1 1 1 " + words(map[int]any{0: float32(-0.5), 1: float32(0.5)}) + " 1 0 8 1 1 1 4 32 32 32 c",
			func(p ops.Params) bool { return p.F32("min") == -0.5 && p.F32("max") == 0.5 }},
		{"64 0 11 4 1 1 " + words(map[int]any{0: 1, 1: 2, 3: 1}) + " 1 0 8 3 1 1 4 32 96 96 pad",
			func(p ops.Params) bool {
				lp, rp := p.Ints("lp"), p.Ints("rp")
				return lp[0] == 1 && rp[0] == 2 && lp[1] == 0 && rp[1] == 1
			}},
		{"22 0 8 5 1 1 " + words(map[int]any{0: 1}) + " 2 0 8 2 1 1 0 0 0 0 0 8 3 1 1 0 0 0 0 cat",
			func(p ops.Params) bool { return p.Int("dim") == 1 }},
		{"34 1 8 2 1 1 " + words(nil) + " 2 0 8 2 1 1 0 0 0 0 1 16 1 1 1 0 0 0 0 cpy",
			func(p ops.Params) bool { return p.Type("type") == ops.F16 }},
		{"100 0 4 2 1 1 " + words(map[int]any{0: 2, 1: 1}) + " 1 0 8 2 1 1 4 32 64 64 g1",
			func(p ops.Params) bool { return p.Str("op") == "swiglu" && p.Bool("swapped") }},
	} {
		c := parseOne(t, tc.line)
		out := c.Nodes[len(c.Nodes)-1]
		if !tc.check(out.Params) {
			t.Errorf("%s: params %v", c.Name, out.Params)
		}
	}
}

func TestBadLines(t *testing.T) {
	good := "25 0 8 1 1 1 " + words(map[int]any{0: float32(1e-6)}) + " 1 0 8 1 1 1 0 0 0 0 ok"
	for _, tc := range []struct{ line, want string }{
		{"25 0 8", "line ends before ne1"},
		{"x 0 8 1 1 1 0 0", `field 1 (op) = "x"`},
		{"25 0 8 1 1 1 17", "n_params"},
		{"25 0 8 1 1 1 1 4294967296 0", "op_params[0]"},
		{"25 0 8 1 1 1 0 11", "n_src"},
		{"9999 0 8 1 1 1 0 0 x", "op 9999 is not a ggml op"},
		{"37 0 8 1 1 1 0 1 0 8 1 1 1 0 0 0 0 v", "a view op"},
		{"25 99 8 1 1 1 0 1 0 8 1 1 1 0 0 0 0 x", "type 99"},
		{"25 0 8 1 1 1 " + words(map[int]any{0: float32(1e-6), 5: 7}) + " 1 0 8 1 1 1 0 0 0 0 x", "op_params[5] = 7"},
		{"25 0 4 1 1 1 " + words(nil) + " 1 0 8 1 1 1 0 0 0 0 x", "the line says f32"},
		{"29 0 8 8 1 1 " + words(nil) + " 1 0 8 8 1 1 0 0 0 0 x", "mul_mat takes 2 sources"},
		{"25 0 8 2 1 1 " + words(nil) + " 1 0 8 2 1 1 8 64 128 128 x", "no dimension has the element stride"},
		// nb1 under the 32-byte row: an input error, not a kernel fault (issue 33).
		{"25 0 8 2 1 1 " + words(map[int]any{0: float32(1e-6)}) + " 1 0 8 2 1 1 4 16 64 64 x", "nb1 = 16 is smaller than a row (ne0 8: 32 bytes)"},
	} {
		data := good + "\n" + tc.line + "\n\n" + good + "\n"
		cs, errs := Parse("bad.txt", []byte(data), abi.Default())
		if len(cs) != 2 {
			t.Errorf("%q: %d good cases, want 2", tc.line, len(cs))
		}
		if len(errs) != 1 {
			t.Errorf("%q: errors %v, want 1", tc.line, errs)
			continue
		}
		var ge *graph.Error
		if !errors.As(errs[0], &ge) || ge.File != "bad.txt" || ge.Line != 2 {
			t.Errorf("%q: error %#v, want bad.txt line 2", tc.line, errs[0])
		}
		if !strings.Contains(errs[0].Error(), tc.want) || !strings.HasPrefix(errs[0].Error(), "bad.txt:2: ") {
			t.Errorf("%q: error %q, want bad.txt:2: ...%s", tc.line, errs[0], tc.want)
		}
	}
}

// TestStridedSources: a source whose nb differs from the contiguous
// strides reads the buffer at exactly those strides, also when nb0 is not
// the element size (a transposed source).
func TestStridedSources(t *testing.T) {
	// CONT of a transposed f32 [3, 5] (stored as [5, 3]): nb = [20, 4, 60, 60].
	c := parseOne(t, "35 0 3 5 1 1 "+words(nil)+" 1 0 3 5 1 1 20 4 60 60 t")
	leaves, err := graph.Materialize(c)
	if err != nil {
		t.Fatal(err)
	}
	buf := leaves["src0_buf"]
	if buf == nil || buf.Ne[0] != 15 {
		t.Fatalf("buffer leaf %+v, want 15 elements (4 + 2·20 + 4·4 bytes)", buf)
	}
	x := buf
	for _, n := range c.Nodes[:len(c.Nodes)-1] {
		info, _ := ops.Lookup(string(n.Op))
		if x, err = info.ViewOf(x, n.Params); err != nil {
			t.Fatal(err)
		}
	}
	if x.Ne != [4]int64{3, 5, 1, 1} || x.Nb[0] != 20 || x.Nb[1] != 4 {
		t.Fatalf("source view ne %v nb %v, want [3 5 1 1] nb [20 4 ...]", x.Ne, x.Nb)
	}
	all := buf.ToF32()
	for i1 := int64(0); i1 < 5; i1++ {
		for i0 := int64(0); i0 < 3; i0++ {
			if got, want := x.F32(i0, i1, 0, 0), all[i0*5+i1]; got != want {
				t.Fatalf("src[%d,%d] = %v, want buffer element %d = %v", i0, i1, got, i0*5+i1, want)
			}
		}
	}
}

// TestInputs: integer sources hold what test_generic_op puts there.
func TestInputs(t *testing.T) {
	get := func(c *graph.Case, name string) *ops.Tensor {
		t.Helper()
		l, err := graph.Materialize(c)
		if err != nil {
			t.Fatal(err)
		}
		return l[name]
	}
	// GET_ROWS: row ids in [0, src0.ne1).
	c := parseOne(t, "40 0 8 50 1 1 "+words(nil)+" 2 0 8 7 1 1 0 0 0 0 26 50 1 1 1 0 0 0 0 g")
	ids := get(c, "src1")
	seen := map[int64]bool{}
	for i := range int64(50) {
		v := ids.Int(i, 0, 0, 0)
		if v < 0 || v >= 7 {
			t.Fatalf("get_rows id %d = %d, want [0, 7)", i, v)
		}
		seen[v] = true
	}
	if len(seen) < 2 {
		t.Errorf("get_rows ids are all %v", seen)
	}
	// SET_ROWS: ids of each row distinct and in [0, dst.ne1).
	c = parseOne(t, "42 1 8 6 1 1 "+words(nil)+" 3 0 8 4 1 1 0 0 0 0 27 4 1 1 1 0 0 0 0 1 8 6 1 1 0 0 0 0 s")
	ids = get(c, "src1")
	seen = map[int64]bool{}
	for i := range int64(4) {
		v := ids.Int(i, 0, 0, 0)
		if v < 0 || v >= 6 || seen[v] {
			t.Fatalf("set_rows ids %v: want 4 distinct values in [0, 6)", ids.Int(i, 0, 0, 0))
		}
		seen[v] = true
	}
	// ROPE: positions in [0, ne2).
	c = parseOne(t, "48 0 8 2 5 1 "+words(map[int]any{1: 8, 5: float32(10000), 6: float32(1), 8: float32(1)})+" 2 0 8 2 5 1 0 0 0 0 26 5 1 1 1 0 0 0 0 r")
	pos := get(c, "src1")
	for i := range int64(5) {
		if v := pos.Int(i, 0, 0, 0); v < 0 || v >= 5 {
			t.Fatalf("rope position %d", v)
		}
	}
	// MUL_MAT_ID: each row of ids holds distinct experts of [0, n_expert).
	c = parseOne(t, "30 0 4 2 3 1 "+words(nil)+" 3 0 8 4 6 1 0 0 0 0 0 8 2 3 1 0 0 0 0 26 2 3 1 1 0 0 0 0 m")
	ids = get(c, "src2")
	for r := range int64(3) {
		a, b := ids.Int(0, r, 0, 0), ids.Int(1, r, 0, 0)
		if a == b || a < 0 || a >= 6 || b < 0 || b >= 6 {
			t.Fatalf("mul_mat_id row %d: experts %d, %d", r, a, b)
		}
	}
	// FLASH_ATTN_EXT: the mask is kq_mask; floats are uniform(-1, 1).
	q := "0 64 4 2 1 0 0 0 0"
	kv := "1 64 16 2 1 0 0 0 0"
	c = parseOne(t, "74 0 64 2 4 1 "+words(map[int]any{0: float32(0.125)})+" 4 "+q+" "+kv+" "+kv+" 1 16 4 1 1 0 0 0 0 fa")
	if in := c.Leaf("src3").Init; in.Func != "kq_mask" {
		t.Errorf("mask init %v", in)
	}
	if in := c.Leaf("src0").Init; in.String() != "uniform(-1, 1)" {
		t.Errorf("q init %v", in)
	}
	if c.Tolerance.NMSE == nil || *c.Tolerance.NMSE != 5e-4 {
		t.Errorf("flash_attn_ext NMSE limit %v, want 5e-4", c.Tolerance.NMSE)
	}
}

// TestContReshapes: ggml_cont_2d (CONT whose ne differs from its source's,
// same element count) is et's cont followed by a reshape to the line's ne.
func TestContReshapes(t *testing.T) {
	c := parseOne(t, "35 0 32 2 1 1 "+words(nil)+" 1 0 8 2 4 1 4 128 32 256 kqv_out")
	if len(c.Outputs) != 1 || c.Outputs[0] != "kqv_out_reshaped" {
		t.Fatalf("outputs %v", c.Outputs)
	}
	n := c.Node("kqv_out_reshaped")
	if n.Op != ops.OpReshape || n.Ne != [4]int64{32, 2, 1, 1} || n.Src[0] != "kqv_out" {
		t.Errorf("reshape node %+v", n)
	}
	// A different element count is still an error.
	_, errs := Parse("t.txt", []byte("35 0 32 3 1 1 "+words(nil)+" 1 0 8 2 4 1 0 0 0 0 x\n"), abi.Default())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "the line says f32") {
		t.Errorf("errors %v", errs)
	}
}

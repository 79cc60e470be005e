package graph

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

func TestParseInit(t *testing.T) {
	tests := []struct {
		in   string
		want string // Init.String(), or "error: <substring>"
	}{
		{"uniform(-1, 1)", "uniform(-1, 1)"},
		{" uniform( -0.5 ,2e-1 ) ", "uniform(-0.5, 0.2)"},
		{"normal(0, 0.02)", "normal(0, 0.02)"},
		{"arange(0)", "arange(0)"},
		{"arange(3, -1)", "arange(3, -1)"},
		{"zeros", "zeros"},
		{"ones()", "ones"},
		{"randint(0, 10)", "randint(0, 10)"},
		{"perm(16)", "perm(16)"},
		{"", "error: unknown init"},
		{"uniform", "error: uniform takes 2 arguments, got 0"},
		{"uniform(0, 1", "error: missing ')'"},
		{"arange(1, 2, 3)", "error: arange takes 1 or 2 arguments, got 3"},
		{"normal(0, -1)", "error: negative standard deviation"},
		{"normal(0, inf)", "error: not a finite number"},
		{"randint(0.5, 3)", "error: want integers lo < hi"},
		{"randint(3, 3)", "error: want integers lo < hi"},
		{"perm(0)", "error: n must be an integer"},
		{"zeros(1)", "error: zeros takes 0 arguments, got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			in, err := ParseInit(tt.in)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.String() != tt.want {
				t.Errorf("String() = %q, want %q", in.String(), tt.want)
			}
		})
	}
}

// TestGeneratorPinned pins the first values of each random init: case
// files promise the same data for the same seed, so a change here breaks
// everyone's saved outputs and must be deliberate.
func TestGeneratorPinned(t *testing.T) {
	tests := []struct {
		init string
		want []float32
	}{
		{"uniform(-1, 1)", []float32{-0.4216299, 0.84588903, -0.36854586, 0.8217793}},
		{"normal(0, 1)", []float32{0.7312869, -0.3845852, 0.73808277, -0.4626345}},
		{"randint(0, 100)", []float32{82, 4, 43, 11}},
		{"arange(2, 0.5)", []float32{2, 2.5, 3, 3.5}},
	}
	for _, tt := range tests {
		in, err := ParseInit(tt.init)
		if err != nil {
			t.Fatal(err)
		}
		g := newGenerator(in, 0, "x", 4)
		got := make([]float32, len(tt.want))
		for i := range got {
			got[i] = float32(g.next())
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s with seed 0, name x: %v, want %v", tt.init, got, tt.want)
		}
		// The parallel fill gives them too, through every Box-Muller
		// kernel this CPU has (a pass of the widest is 16 values).
		for _, pairs := range normalKernels() {
			func() {
				row := make([]float32, 32)
				fillF32With(pairs, in, newRNG(0, "x").s, 0, row)
				if !reflect.DeepEqual(row[:len(tt.want)], tt.want) {
					t.Errorf("%s with seed 0, name x, filled (%d pairs per pass): %v, want %v", tt.init, pairs, row[:len(tt.want)], tt.want)
				}
			}()
		}
	}
}

func materializeOneLeaf(t *testing.T, seed uint64, name string, typ ops.Type, ne []int64, init string) *ops.Tensor {
	t.Helper()
	in, err := ParseInit(init)
	if err != nil {
		t.Fatal(err)
	}
	c := &Case{Seed: seed, Tensors: []TensorSpec{{Name: name, Type: typ, Ne: ne, Init: in}}}
	m, err := Materialize(c)
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}

func TestMaterializeDeterminism(t *testing.T) {
	for _, typ := range ops.Types {
		if !typ.HasCodec() {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			ne := []int64{256, 3}
			init := "normal(0, 1)"
			if typ.Integer() {
				init = "randint(-100, 100)"
			}
			a := materializeOneLeaf(t, 7, "w", typ, ne, init)
			b := materializeOneLeaf(t, 7, "w", typ, ne, init)
			if !bytes.Equal(a.Buf, b.Buf) {
				t.Error("same seed and name gave different bytes")
			}
			if a.Name != "w" || a.Type != typ || a.Ne != [4]int64{256, 3, 1, 1} {
				t.Errorf("tensor %s %s %v", a.Name, a.Type, a.Ne)
			}
			if c := materializeOneLeaf(t, 7, "w2", typ, ne, init); bytes.Equal(a.Buf, c.Buf) {
				t.Error("different names gave the same bytes")
			}
			if c := materializeOneLeaf(t, 8, "w", typ, ne, init); bytes.Equal(a.Buf, c.Buf) {
				t.Error("different seeds gave the same bytes")
			}
		})
	}
}

// A leaf of a type without a host codec cannot be generated: the error is
// the NoHostMathError that makes a run skip the case.
func TestMaterializeNoCodec(t *testing.T) {
	for _, typ := range ops.Types {
		if typ.HasCodec() {
			continue
		}
		u, _ := ParseInit("uniform(-1, 1)")
		c := &Case{Tensors: []TensorSpec{{Name: "w", Type: typ, Ne: []int64{256, 2}, Init: u}}}
		_, err := Materialize(c)
		var nh *ops.NoHostMathError
		if !errors.As(err, &nh) || nh.What != "type "+typ.String() {
			t.Errorf("%s: err = %v, want no host math for type %s", typ, err, typ)
		}
	}
}

// TestMaterializeOrderIndependent: a leaf's data depends on its name, not
// on where it is declared.
func TestMaterializeOrderIndependent(t *testing.T) {
	u, _ := ParseInit("uniform(-1, 1)")
	x := TensorSpec{Name: "x", Type: ops.F32, Ne: []int64{64}, Init: u}
	y := TensorSpec{Name: "y", Type: ops.F32, Ne: []int64{64}, Init: u}
	m1, err := Materialize(&Case{Tensors: []TensorSpec{x, y}})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Materialize(&Case{Tensors: []TensorSpec{y, x}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m1["x"].Buf, m2["x"].Buf) || !bytes.Equal(m1["y"].Buf, m2["y"].Buf) {
		t.Error("declaration order changed the data")
	}
}

func TestMaterializeValues(t *testing.T) {
	const n = 1 << 14
	u := materializeOneLeaf(t, 0, "u", ops.F32, []int64{n}, "uniform(2, 3)").ToF32()
	for i, v := range u {
		if v < 2 || v > 3 {
			t.Fatalf("uniform(2, 3)[%d] = %v", i, v)
		}
	}
	nv := materializeOneLeaf(t, 0, "n", ops.F32, []int64{n}, "normal(5, 2)").ToF32()
	var sum, sq float64
	for _, v := range nv {
		sum += float64(v)
	}
	mean := sum / n
	for _, v := range nv {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	std := math.Sqrt(sq / n)
	// Deterministic data: these bounds are about 5 standard errors wide.
	if math.Abs(mean-5) > 0.08 || math.Abs(std-2) > 0.06 {
		t.Errorf("normal(5, 2): mean %.4f std %.4f", mean, std)
	}
	ints := materializeOneLeaf(t, 0, "r", ops.I32, []int64{n}, "randint(-3, 4)")
	hits := map[int64]int{}
	for i := int64(0); i < n; i++ {
		hits[ints.Int(i, 0, 0, 0)]++
	}
	for v := range hits {
		if v < -3 || v >= 4 {
			t.Errorf("randint(-3, 4) gave %d", v)
		}
	}
	if len(hits) != 7 {
		t.Errorf("randint(-3, 4) hit %d distinct values, want 7", len(hits))
	}
	ar := materializeOneLeaf(t, 0, "a", ops.I64, []int64{4, 2}, "arange(-2, 3)")
	if got := ar.ToF32(); !reflect.DeepEqual(got, []float32{-2, 1, 4, 7, 10, 13, 16, 19}) {
		t.Errorf("arange(-2, 3) = %v", got)
	}
	if got := materializeOneLeaf(t, 0, "o", ops.F16, []int64{3}, "ones").ToF32(); !reflect.DeepEqual(got, []float32{1, 1, 1}) {
		t.Errorf("ones = %v", got)
	}
	p := materializeOneLeaf(t, 0, "p", ops.I64, []int64{10, 50}, "perm(10)")
	for r := int64(0); r < 50; r++ {
		seen := map[int64]bool{}
		for i := int64(0); i < 10; i++ {
			v := p.Int(i, r, 0, 0)
			if v < 0 || v >= 10 || seen[v] {
				t.Fatalf("perm(10) row %d: %d repeated or out of range", r, v)
			}
			seen[v] = true
		}
	}
	// The default init of a float leaf is uniform(-1, 1), of an integer
	// leaf zeros.
	d := materializeOneLeaf(t, 0, "d", ops.F32, []int64{64}, "uniform(-1, 1)")
	c := &Case{Tensors: []TensorSpec{{Name: "d", Type: ops.F32, Ne: []int64{64}}, {Name: "i", Type: ops.I32, Ne: []int64{4}}}}
	m, err := Materialize(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m["d"].Buf, d.Buf) {
		t.Error("default float init is not uniform(-1, 1)")
	}
	if !bytes.Equal(m["i"].Buf, make([]byte, 16)) {
		t.Error("default integer init is not zeros")
	}
}

// TestMaterializeQuantized: a quantized leaf holds the reference
// quantization of the f32 data the same init gives.
func TestMaterializeQuantized(t *testing.T) {
	f := materializeOneLeaf(t, 3, "w", ops.F32, []int64{64, 2}, "uniform(-1, 1)")
	q := materializeOneLeaf(t, 3, "w", ops.Q8_0, []int64{64, 2}, "uniform(-1, 1)")
	want := ops.FromF32(ops.Q8_0, []int64{64, 2}, f.ToF32())
	if !bytes.Equal(q.Buf, want.Buf) {
		t.Error("q8_0 leaf is not the quantized f32 data")
	}
}

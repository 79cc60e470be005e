package graph

import (
	"math"
	"reflect"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

func TestSplitOpsFilter(t *testing.T) {
	for in, want := range map[string][]string{
		"MUL_MAT":                       {"MUL_MAT"},
		"ADD,MUL":                       {"ADD", "MUL"},
		"ADD(type=f32,ne=[4,1]),MUL":    {"ADD(type=f32,ne=[4,1])", "MUL"},
		"SILU,ADD(type=f32,nr=[1,2]),X": {"SILU", "ADD(type=f32,nr=[1,2])", "X"},
		"ADD(type=f32":                  {"ADD(type=f32"},
	} {
		if got := splitOpsFilter(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitOpsFilter(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	cs, err := ParseCaseString("RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0)")
	if err != nil {
		t.Fatal(err)
	}
	unary, err := ParseCaseString("SILU(type=f32,ne_a=[128,2,2,2],v=0)")
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := Load("testdata/cases/llama-attn-q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ops, params string
		c           *Case
		want        bool
	}{
		{"", "", cs, true},
		{"RMS_NORM", "", cs, true},
		{"rms_norm", "", cs, true},
		{"NORM", "", cs, false},
		{"MUL,RMS_NORM", "", cs, true},
		{"RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=0)", "", cs, true},
		{"RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace=1)", "", cs, false},
		{"SILU", "", unary, true},
		{"UNARY", "", unary, false},
		{"", `ne=\[64,`, cs, true},
		{"", `ne=\[65,`, cs, false},
		{"RMS_NORM", `v=1`, cs, false},
		{"ROPE", "", yaml, true},
		{"MUL_MAT", "", yaml, true},
		{"SOFT_MAX", "", yaml, false},
		{"", "attn", yaml, true},
	} {
		f, err := NewFilter(tc.ops, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(tc.c); got != tc.want {
			t.Errorf("Filter{%q, %q}.Match(%s) = %v, want %v", tc.ops, tc.params, tc.c.Name, got, tc.want)
		}
	}
	if _, err := NewFilter("", "("); err == nil {
		t.Error("bad regexp accepted")
	}
}

func TestKQMaskInit(t *testing.T) {
	// 256 x 320 = 81920 elements: floor(0.2·81920 / 8192) = 2 blocks.
	// A 200 x 100 mask (20000 elements) has none.
	for _, tc := range []struct {
		ne     []int64
		blocks bool
	}{{[]int64{256, 320}, true}, {[]int64{200, 100}, false}} {
		c := &Case{Name: "m", Seed: 3, Tensors: []TensorSpec{{Name: "mask", Type: ops.F16, Ne: tc.ne, Init: Init{Func: "kq_mask"}}}}
		leaves, err := Materialize(c)
		if err != nil {
			t.Fatal(err)
		}
		checkMask(t, leaves["mask"].ToF32(), tc.blocks)
	}
	in, err := ParseInit("kq_mask")
	if err != nil || in.Func != "kq_mask" {
		t.Errorf("ParseInit(kq_mask) = %v, %v", in, err)
	}
	if err := checkInit(in, ops.I32, []int64{4}); err == nil {
		t.Error("kq_mask accepted for i32")
	}
}

func checkMask(t *testing.T, v []float32, blocks bool) {
	t.Helper()
	ninf, nzero := 0, 0
	for _, f := range v {
		switch {
		case math.IsInf(float64(f), -1):
			ninf++
		case f == 0:
			nzero++
		case f < -1 || f > 1:
			t.Fatalf("value %v outside [-1, 1]", f)
		}
	}
	if got := ninf+nzero > 0; got != blocks || ninf+nzero > 2*128*64 {
		t.Errorf("%d -inf and %d zeros in %d values, want blocks: %v (at most two of 64x128)", ninf, nzero, len(v), blocks)
	}
}

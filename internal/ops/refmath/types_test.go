package refmath

import (
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// ggmlTypes is what libggml-base d99724f2 reports for every GGML_TYPE_*:
// ggml_type_name, ggml_blck_size, ggml_type_size, ggml_is_quantized.
var ggmlTypes = []struct {
	name      string
	blck, sz  int
	quantized bool
}{
	{"f32", 1, 4, false}, {"f16", 1, 2, false}, {"q4_0", 32, 18, true}, {"q4_1", 32, 20, true},
	{"q5_0", 32, 22, true}, {"q5_1", 32, 24, true}, {"q8_0", 32, 34, true}, {"q8_1", 32, 36, true},
	{"q2_K", 256, 84, true}, {"q3_K", 256, 110, true}, {"q4_K", 256, 144, true}, {"q5_K", 256, 176, true},
	{"q6_K", 256, 210, true}, {"q8_K", 256, 292, true}, {"iq2_xxs", 256, 66, true}, {"iq2_xs", 256, 74, true},
	{"iq3_xxs", 256, 98, true}, {"iq1_s", 256, 50, true}, {"iq4_nl", 32, 18, true}, {"iq3_s", 256, 110, true},
	{"iq2_s", 256, 82, true}, {"iq4_xs", 256, 136, true}, {"i8", 1, 1, false}, {"i16", 1, 2, false},
	{"i32", 1, 4, false}, {"i64", 1, 8, false}, {"f64", 1, 8, false}, {"iq1_m", 256, 56, true},
	{"bf16", 1, 2, false}, {"tq1_0", 256, 54, true}, {"tq2_0", 256, 66, true}, {"mxfp4", 32, 17, true},
	{"nvfp4", 64, 36, true}, {"q1_0", 128, 18, true}, {"q2_0", 64, 18, true},
}

func TestTypesMatchGGML(t *testing.T) {
	if len(ops.Types) != len(ggmlTypes) {
		t.Fatalf("%d types, ggml has %d", len(ops.Types), len(ggmlTypes))
	}
	seen := map[ops.Type]bool{}
	for _, g := range ggmlTypes {
		typ, err := ops.ParseType(g.name)
		if err != nil {
			t.Errorf("ParseType(%q): %v", g.name, err)
			continue
		}
		if seen[typ] {
			t.Errorf("%s parsed twice", g.name)
		}
		seen[typ] = true
		if typ.String() != g.name || typ.BlockSize() != g.blck || typ.TypeSize() != g.sz || typ.Quantized() != g.quantized {
			t.Errorf("%s: %s block %d size %d quantized %v; ggml %d %d %v", g.name, typ, typ.BlockSize(), typ.TypeSize(), typ.Quantized(), g.blck, g.sz, g.quantized)
		}
		if up, err := ops.ParseType(strings.ToUpper(g.name)); err != nil || up != typ {
			t.Errorf("ParseType(%q) = %s, %v", strings.ToUpper(g.name), up, err)
		}
	}
	if _, err := ops.ParseType("q4_2"); err == nil || !strings.Contains(err.Error(), `unknown type "q4_2"`) {
		t.Errorf("ParseType(q4_2) err = %v", err)
	}
}

func TestCodecError(t *testing.T) {
	for _, typ := range ops.Types {
		err := ops.CodecError(typ)
		if typ.HasCodec() != (err == nil) {
			t.Errorf("%s: HasCodec %v, CodecError %v", typ, typ.HasCodec(), err)
		}
		if err == nil {
			continue
		}
		var nh *ops.NoHostMathError
		if !errors.As(err, &nh) || nh.What != "type "+typ.String() {
			t.Errorf("%s: CodecError = %#v", typ, err)
		}
		n := typ.BlockSize()
		if ops.Quantize(typ, make([]float32, n), make([]byte, typ.TypeSize())) == nil {
			t.Errorf("%s: Quantize without a codec succeeded", typ)
		}
		if ops.Dequantize(typ, make([]byte, typ.TypeSize()), make([]float32, n)) == nil {
			t.Errorf("%s: Dequantize without a codec succeeded", typ)
		}
	}
	// Every type but these has a codec.
	for _, typ := range []ops.Type{ops.Q8_1, ops.Q8_K, ops.IQ2_XXS, ops.IQ2_XS, ops.IQ2_S, ops.IQ3_XXS, ops.IQ3_S, ops.IQ1_S, ops.IQ1_M} {
		if typ.HasCodec() {
			t.Errorf("%s has a codec", typ)
		}
	}
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.BF16, ops.F64, ops.I8, ops.I16, ops.I32, ops.I64, ops.Q4_0, ops.Q4_1, ops.Q5_0, ops.Q5_1, ops.Q8_0, ops.Q2_K, ops.Q3_K, ops.Q4_K, ops.Q5_K, ops.Q6_K, ops.Q1_0, ops.Q2_0, ops.TQ1_0, ops.TQ2_0, ops.MXFP4, ops.NVFP4, ops.IQ4_NL, ops.IQ4_XS} {
		if !typ.HasCodec() {
			t.Errorf("%s has no codec", typ)
		}
	}
}

// i8 and i16 convert as a C cast (toward zero), and back exactly.
func TestSmallIntTypes(t *testing.T) {
	src := []float32{-128.9, -1.5, -0.5, 0, 0.9, 1.5, 127.2, 100}
	want := []float32{-128, -1, 0, 0, 0, 1, 127, 100}
	for _, typ := range []ops.Type{ops.I8, ops.I16} {
		buf := make([]byte, typ.RowSize(int64(len(src))))
		ops.QuantizeRow(typ, src, buf)
		got := make([]float32, len(src))
		ops.DequantizeRow(typ, buf, got)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: %g -> %g, want %g", typ, src[i], got[i], want[i])
			}
		}
		x := ops.New(typ, 3)
		x.SetInt(1, 0, 0, 0, -7)
		if v := x.Int(1, 0, 0, 0); v != -7 {
			t.Errorf("%s: Int = %d, want -7", typ, v)
		}
	}
	x := ops.New(ops.I16, 1)
	x.SetInt(0, 0, 0, 0, 40000) // wraps as a C cast to int16_t does
	if v := x.Int(0, 0, 0, 0); v != 40000-65536 {
		t.Errorf("i16 40000 -> %d", v)
	}
}

// A reference op on a tensor of a type without a host codec returns the
// NoHostMathError naming the type, not a panic.
func TestRunRefusesTypeWithoutCodec(t *testing.T) {
	info, ok := ops.Lookup("cpy")
	if !ok {
		t.Fatal("no cpy")
	}
	src := ops.New(ops.F32, 256, 2)
	dst := ops.New(ops.IQ2_XXS, 256, 2)
	p, err := info.Normalize(map[string]any{"type": "iq2_xxs"})
	if err != nil {
		t.Fatal(err)
	}
	err = Run(info, dst, []*ops.Tensor{src}, p)
	var nh *ops.NoHostMathError
	if !errors.As(err, &nh) || nh.What != "type iq2_xxs" {
		t.Errorf("Run = %v, want no host math for type iq2_xxs", err)
	}
}

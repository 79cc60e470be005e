package abi

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// FuzzDecodeTensor: any bytes decode without panicking; short input is an
// error; a decoded tensor re-encodes to bytes that decode to the same value.
func FuzzDecodeTensor(f *testing.F) {
	good := make([]byte, TensorSize)
	if err := EncodeTensor(good, TensorDesc{Type: ops.Q8_0, Ne: [4]int64{4096, 4096, 1, 1},
		Nb: [4]uint64{34, 4352, 17825792, 17825792}, Data: 0x8005801000, Name: "blk.0.attn_q.weight"}); err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(make([]byte, TensorSize))
	f.Add(good[:100])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeTensor(b)
		if len(b) < TensorSize {
			if err == nil {
				t.Fatal("short buffer decoded without error")
			}
			return
		}
		if err != nil {
			return
		}
		enc := make([]byte, TensorSize)
		if err := EncodeTensor(enc, d); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		d2, err := DecodeTensor(enc)
		if err != nil {
			t.Fatalf("decode of re-encoded tensor: %v", err)
		}
		if len(d.Name) < MaxName && d2 != d {
			t.Fatalf("round trip changed the tensor:\n%+v\n%+v", d, d2)
		}
	})
}

// FuzzDecodeParams: any bytes, decoded as any layout, never panic; short
// buffers are errors; decode∘encode is idempotent from the first encode on.
//
// Unless short is set, the bytes are repeated to the layout's size, so that
// seeds stay small (whole encodings, up to KiBs for every layout, starve the
// fuzzer: each new input it finds is minimised, at a cost growing with its
// size). TestDecodeParamsBigInputs runs the whole encodings.
func FuzzDecodeParams(f *testing.F) {
	layouts := Layouts()
	for i, l := range layouts {
		b, err := l.Encode(fullValues(l))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), false, b[:min(len(b), 32)])
	}
	f.Add(uint8(0), true, []byte{})
	f.Add(uint8(1), true, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, which uint8, short bool, b []byte) {
		l := layouts[int(which)%len(layouts)]
		if !short && len(b) > 0 && len(b) < l.Size {
			full := make([]byte, l.Size)
			for i := range full {
				full[i] = b[i%len(b)]
			}
			b = full
		}
		checkDecodeParams(t, l, b)
	})
}

func TestDecodeParamsBigInputs(t *testing.T) {
	for _, l := range Layouts() {
		b, err := l.Encode(fullValues(l))
		if err != nil {
			t.Fatal(err)
		}
		checkDecodeParams(t, l, b)
		checkDecodeParams(t, l, b[:len(b)/2])
	}
}

func checkDecodeParams(t *testing.T, l *Layout, b []byte) {
	{
		v, err := l.Decode(b)
		if len(b) < l.Size && err == nil {
			t.Fatalf("%s: %d-byte buffer decoded without error", l.Name, len(b))
		}
		if err != nil {
			return
		}
		b1, err := l.Encode(v)
		if err != nil {
			t.Fatalf("%s: re-encode: %v", l.Name, err)
		}
		v1, err := l.Decode(b1)
		if err != nil {
			t.Fatalf("%s: decode of re-encoded params: %v", l.Name, err)
		}
		b2, err := l.Encode(v1)
		if err != nil {
			t.Fatalf("%s: second re-encode: %v", l.Name, err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("%s: encode/decode is not idempotent", l.Name)
		}
	}
}

// FuzzParseManifest: arbitrary manifest text never panics, and errors carry
// the file name.
// Seeds are small: the built-in manifest (KiBs) is checked by
// TestParseManifestBigInputs instead, as big seeds starve the fuzzer.
// Inputs are bounded by maxFuzzManifest.
func FuzzParseManifest(f *testing.F) {
	// Every section with one entry, so that mutations reach each
	// section's parser.
	f.Add([]byte("ggml:\n  commit: d99724f\nops:\n  ADD: 2\ntypes:\n  f32: 0\nunary_ops:\n  ABS: 0\nglu_ops:\n  REGLU: 0\n" +
		"rope_modes:\n  NEOX: 2\ntri_types:\n  UPPER: 1\nuberkernel:\n  param_align: 64\n  kernels:\n    el_map_f32: 5\n" +
		"kernels:\n  el_map_f32: elmap\nsizes:\n  elmap: 1008\n"))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("ops: {ADD: 2}\n"))
	f.Add([]byte("- [\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzManifest {
			return // see maxFuzzManifest
		}
		checkParseManifest(t, b)
	})
}

// maxFuzzManifest bounds FuzzParseManifest's inputs: every section with an
// entry or two fits (the seed is about 250 bytes); a whole manifest does
// not fit in any bound the fuzzer can work with (its minimiser's cost
// grows with the square of an input's length), so the required-entries
// checks past the sections are TestParseManifestBigInputs'.
const maxFuzzManifest = 320

func TestParseManifestBigInputs(t *testing.T) {
	checkParseManifest(t, DefaultYAML())
}

func checkParseManifest(t *testing.T, b []byte) {
	m, err := Parse("fuzz.yaml", b)
	if err != nil {
		if !bytes.HasPrefix([]byte(err.Error()), []byte("fuzz.yaml")) {
			t.Fatalf("error without file name: %v", err)
		}
		return
	}
	if _, ok := m.TypeValue(ops.F32); !ok {
		t.Fatal("a manifest that loaded has no f32")
	}
}

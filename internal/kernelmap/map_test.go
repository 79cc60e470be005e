package kernelmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	tests := []struct {
		file     string
		entries  int
		names    []string
		warnings int
	}{
		{"sample.json", 1, []string{"mul_mat_f32"}, 0},
		{"two_devices.json", 6, []string{"mul_mat_Q8_0", "mul_mat_f32", "rms_norm_mul_f32"}, 0},
		{"empty.json", 0, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() != tt.entries || len(m.Warnings) != tt.warnings || strings.Join(m.Names(), ",") != strings.Join(tt.names, ",") {
				t.Errorf("map %v, names %v, warnings %v", m, m.Names(), m.Warnings)
			}
		})
	}
	m, _ := ReadFile("testdata/two_devices.json")
	if m.Label(0) != "mul_mat_Q8_0" || m.Label(3) != "mul_mat_Q8_0" || m.Label(99) != "kernel#99" {
		t.Errorf("labels %q %q %q", m.Label(0), m.Label(3), m.Label(99))
	}
	var nilMap *Map
	if nilMap.Label(4) != "kernel#4" || nilMap.Len() != 0 {
		t.Error("nil map")
	}
}

func TestReadMissing(t *testing.T) {
	_, err := ReadFile("testdata/nope.json")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestDuplicateID(t *testing.T) {
	m, err := Read(strings.NewReader(`{"a": 1, "b": 1, "a": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Label(1) != "a" || m.Label(2) != "a" || len(m.Warnings) != 1 {
		t.Errorf("%v %v", m, m.Warnings)
	}
}

func TestParseError(t *testing.T) {
	tests := []struct{ name, in, msg string }{
		{"array", `[1]`, "byte 1: want a JSON object of kernel name to id"},
		{"string id", `{"a": "1"}`, `kernel "a": id is not a number`},
		{"float id", `{"a": 1.5}`, `kernel "a": id 1.5 is not an integer`},
		{"truncated", "{\n  \"a\": 1,\n", "unexpected end of file"},
		{"trailing", `{"a": 1} x`, "byte"},
		{"syntax", `{"a" 1}`, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(strings.NewReader(tt.in), "k.json")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v", err)
			}
			if !strings.HasPrefix(err.Error(), "parsing kernel map: k.json: byte ") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want %q", err, tt.msg)
			}
		})
	}
}

func TestWriteRoundTrip(t *testing.T) {
	for _, f := range []string{"sample.json", "two_devices.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", f))
		m, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, m.Entries); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), b) {
			t.Errorf("%s: wrote\n%s\nwant\n%s", f, out.Bytes(), b)
		}
	}
}

// maxFuzzMap bounds FuzzRead's inputs: a map of two devices' kernels
// (two_devices.json, 135 bytes) fits; longer inputs only feed the fuzzer's
// minimiser, whose cost grows with the square of an input's length.
const maxFuzzMap = 192

func FuzzRead(f *testing.F) {
	for _, n := range []string{"sample.json", "two_devices.json", "empty.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil || len(b) > maxFuzzMap {
			f.Fatalf("seed %s: %d bytes, %v", n, len(b), err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzMap {
			return // see maxFuzzMap
		}
		m, err := Read(bytes.NewReader(b))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := Write(&out, m.Entries); err != nil {
			t.Fatal(err)
		}
		m2, err := Read(&out)
		if err != nil || m2.Len() != m.Len() {
			t.Fatalf("round trip: %v, %d entries, want %d", err, m2.Len(), m.Len())
		}
	})
}

// A name listed twice with the same id, or a negative id, is no map ggml
// writes: each is a warning, the map still reads (issue 33). A name with
// two ids (one per device) is not.
func TestSuspectEntries(t *testing.T) {
	for _, tt := range []struct {
		doc, warn string
	}{
		{`{"a": 1, "a": 1}`, `kernel "a" listed twice with id 1`},
		{`{"a": -3}`, `kernel "a" has id -3`},
		{`{"a": 1, "a": 2}`, ""},
	} {
		m, err := Read(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(m.Warnings, "; ")
		if (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
			t.Errorf("%s: warnings %q, want %q", tt.doc, got, tt.warn)
		}
	}
}

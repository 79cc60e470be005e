package graph

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadNpyFixtures reads the hand-built files of testdata/npy (see
// testdata/README.md).
func TestReadNpyFixtures(t *testing.T) {
	tests := []struct {
		file   string
		dtype  string
		shape  []int64
		floats []float32
		ints   []int64
	}{
		{"f4_2x3_v1.npy", "f4", []int64{2, 3}, []float32{0, 1, 2, 3, 4, 5}, nil},
		{"i4_4_v2.npy", "i4", []int64{4}, nil, []int64{3, 1, -4, 1}},
		{"f2_scalar_v3.npy", "f2", []int64{}, []float32{1.5}, nil},
		{"f8_3_v1_align16.npy", "f8", []int64{3}, []float32{0.5, -2, 0.001}, nil},
		{"i8_2x2_v1.npy", "i8", []int64{2, 2}, nil, []int64{0, 1, 1 << 40, -7}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			a, err := ReadNpyFile(filepath.Join("testdata", "npy", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if a.Dtype != tt.dtype || !reflect.DeepEqual(a.Shape, tt.shape) {
				t.Errorf("dtype %s shape %v, want %s %v", a.Dtype, a.Shape, tt.dtype, tt.shape)
			}
			if tt.floats != nil {
				got, err := a.Float32s()
				if err != nil || !reflect.DeepEqual(got, tt.floats) {
					t.Errorf("Float32s = %v, %v; want %v", got, err, tt.floats)
				}
				if _, err := a.Int64s(); err == nil {
					t.Errorf("Int64s of a float array: no error")
				}
			}
			if tt.ints != nil {
				got, err := a.Int64s()
				if err != nil || !reflect.DeepEqual(got, tt.ints) {
					t.Errorf("Int64s = %v, %v; want %v", got, err, tt.ints)
				}
			}
		})
	}
}

func TestReadNpyErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "npy", "f4_2x3_v1.npy"))
	if err != nil {
		t.Fatal(err)
	}
	withHeader := func(h string) []byte {
		var b bytes.Buffer
		b.WriteString("\x93NUMPY\x01\x00")
		b.WriteByte(byte(len(h)))
		b.WriteByte(byte(len(h) >> 8))
		b.WriteString(h)
		return b.Bytes()
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a .npy file"},
		{"text", []byte("hello world"), "not a .npy file"},
		{"version", append([]byte("\x93NUMPY\x04\x00"), good[8:]...), "unsupported .npy format version 4.0"},
		{"short header", good[:40], "truncated .npy header"},
		{"short data", good[:len(good)-1], "data is 23 bytes, shape (2, 3) of <f4 needs 24"},
		{"long data", append(append([]byte{}, good...), 0), "data is 25 bytes"},
		{"dtype", withHeader("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }\n"), `unsupported dtype "<u2"`},
		{"missing key", withHeader("{'descr': '<f4', 'shape': (1,), }\n"), `bad .npy header: missing key "fortran_order"`},
		{"unknown key", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n"), `bad .npy header: unknown key "x"`},
		{"1-tuple", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1), }\n"), "bad .npy header: shape: a 1-tuple needs a trailing comma"},
		{"bad shape", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }\n"), "bad .npy header: shape: want a non-negative integer"},
		{"huge shape", withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }\n"), "bad .npy header: shape [1000000000 1000000000] is too large"},
		{"not a dict", withHeader("['descr']\n"), "bad .npy header: want '{'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeNpy(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
	for _, tt := range []struct{ file, want string }{
		{"bad_fortran.npy", "bad_fortran.npy: fortran_order is True: et reads C-order (row-major) arrays only"},
		{"bad_bigendian.npy", `bad_bigendian.npy: big-endian dtype ">f4" is not supported`},
		{"bad_truncated.npy", "bad_truncated.npy: data is 20 bytes, shape (2, 3) of <f4 needs 24"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			_, err := ReadNpyFile(filepath.Join("testdata", "npy", tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			var ie interface{ InputError() }
			if !errors.As(err, &ie) {
				t.Errorf("error %T does not implement InputError", err)
			}
		})
	}
}

// TestEncodeNpyMatchesNumpyLayout checks that et writes the same bytes as
// the fixture built from the format spec (numpy's own layout).
func TestEncodeNpyMatchesNumpyLayout(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "npy", "f4_2x3_v1.npy"))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := EncodeNpyF32(&got, []int64{2, 3}, []float32{0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("encoded\n%q\nwant\n%q", got.Bytes(), want)
	}
}

func TestNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		shape []int64
	}{
		{"scalar", []int64{}},
		{"vector", []int64{7}},
		{"matrix", []int64{3, 5}},
		{"4d", []int64{2, 1, 3, 4}},
		{"empty", []int64{0, 3}},
		{"v2 header", ones(22000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 1
			for _, d := range tt.shape {
				n *= int(d)
			}
			data := make([]float32, n)
			for i := range data {
				data[i] = float32(i)*0.25 - 3
			}
			data = append(data[:0:0], data...)
			if n > 2 {
				data[1] = float32(math.Inf(-1))
				data[2] = float32(math.Copysign(0, -1))
			}
			path := filepath.Join(dir, tt.name+".npy")
			var enc bytes.Buffer
			if err := EncodeNpyF32(&enc, tt.shape, data); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, enc.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			end := 10 + (int(b[8]) | int(b[9])<<8)
			if b[6] == 2 {
				end = 12 + (int(b[8]) | int(b[9])<<8 | int(b[10])<<16)
			}
			if wantV := byte(1 + len(tt.shape)/20000); b[6] != wantV || end%64 != 0 {
				t.Errorf("version %d header ends at %d, want version %d and a multiple of 64", b[6], end, wantV)
			}
			a, err := ReadNpyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := a.Float32s()
			if !reflect.DeepEqual(a.Shape, tt.shape) || len(got) != len(data) {
				t.Fatalf("shape %v len %d, want %v len %d", a.Shape, len(got), tt.shape, len(data))
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(data[i]) {
					t.Fatalf("element %d = %v, want %v", i, got[i], data[i])
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestEncodeNpyChecksLength(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeNpyF32(&b, []int64{2}, []float32{1}); err == nil || b.Len() != 0 {
		t.Fatalf("1 value with shape (2,): err %v, %d bytes written", err, b.Len())
	}
}

func TestNpyShape(t *testing.T) {
	tests := []struct {
		ne   []int64
		want []int64
	}{
		{[]int64{4096, 7, 1, 1}, []int64{7, 4096}},
		{[]int64{1, 1, 1, 1}, []int64{}},
		{[]int64{5}, []int64{5}},
		{[]int64{1, 3}, []int64{3, 1}},
		{[]int64{2, 3, 4, 5}, []int64{5, 4, 3, 2}},
	}
	for _, tt := range tests {
		if got := NpyShape(tt.ne); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("NpyShape(%v) = %v, want %v", tt.ne, got, tt.want)
		}
	}
	if !shapeMatches([]int64{1, 4096}, []int64{4096}) || !shapeMatches([]int64{}, []int64{1}) || shapeMatches([]int64{4096, 1}, []int64{4096}) {
		t.Error("shapeMatches: leading numpy 1s must be ignored, trailing ones not")
	}
}

func ones(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

package kernelargs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeKernelArgs(t *testing.T) {
	bufs := map[string]bool{"x": true}
	var args []Arg
	for _, s := range []string{"u32:7", "u64:@x+8", "u8:0xff", "f32:0.5", "pad:2", "align:8", "file:p.bin", "f16:1"} {
		a, err := ParseArg(s, bufs)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, a)
	}
	blob, fields := Encode(args, map[string]uint64{"x": 0x8000}, map[string][]byte{"p.bin": {0xAA, 0xBB, 0xCC}})
	want := []byte{
		7, 0, 0, 0, 0, 0, 0, 0, // u32 then padding to 8
		0x08, 0x80, 0, 0, 0, 0, 0, 0, // x + 8
		0xff, 0, 0, 0, // u8, padding to 4
		0, 0, 0, 0x3f, // 0.5f
		0, 0, 0, 0, 0, 0, 0, 0, // pad:2 (offset 24), align:8 -> 32
		0xAA, 0xBB, 0xCC, // file, unaligned
		0, 0, 0x3c, // f16 1.0 aligned to 2 (offset 36)
	}
	if !bytes.Equal(blob, want) {
		t.Errorf("blob\n got % x\nwant % x", blob, want)
	}
	var offs []int
	for _, f := range fields {
		offs = append(offs, f.Offset)
	}
	if !reflect.DeepEqual(offs, []int{0, 8, 16, 20, 24, 32, 36}) {
		t.Errorf("offsets %v (fields %+v)", offs, fields)
	}
	if n := Size(args, map[string][]byte{"p.bin": {0xAA, 0xBB, 0xCC}}); n != len(want) {
		t.Errorf("Size = %d, want the blob's %d", n, len(want))
	}
}

// The params blob is bounded (1000 x pad:1048576 was accepted at 3.56 GB
// of memory; the runtime takes about 656 KiB).
func TestParamsBlobCap(t *testing.T) {
	if _, err := ParseArgs([]string{"pad:1048576"}, nil); err != nil {
		t.Errorf("a 1 MiB blob: %v", err)
	}
	_, err := ParseArgs([]string{"u8:1", "pad:1048576", "pad:1048576"}, nil)
	if err == nil || err.Error() != `--arg "pad:1048576": the params blob would be 1048577 bytes, over the 1024 KiB limit (the runtime takes about 656 KiB)` {
		t.Errorf("over 1 MiB: %v", err)
	}
	args, _ := ParseArgs([]string{"u32:1", "file:p.bin"}, nil)
	if err := CheckSize(args, map[string][]byte{"p.bin": make([]byte, MaxParams)}); err == nil {
		t.Error("a file: argument past the bound: no error")
	}
}

// FuzzParseKernelFlags checks that --arg and --buf specs never panic.
func FuzzParseKernelFlags(f *testing.F) {
	for _, s := range []string{"u32:7", "u64:@x+0x10", "f16:1e9", "align:8", "pad:3", "file:p.bin", "x=4K:pattern", "x=0x10:a.npy", "i8:-129"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// A spec is a few bytes; long inputs only feed the minimiser,
		// whose cost grows with the square of their length.
		if len(s) > 24 {
			return
		}
		if a, err := ParseArg(s, map[string]bool{"x": true}); err == nil {
			Encode([]Arg{a}, map[string]uint64{"x": 64}, map[string][]byte{a.File: {1}})
		}
		ParseBufs([]string{s})
		ParseSize(s)
	})
}

// A float too large for its type is out of range, as u8:256 is, not
// silently infinite; inf given as such is kept (issue 33).
func TestParseArgFloatRange(t *testing.T) {
	for _, tt := range []struct {
		spec string
		ok   bool
	}{
		{"f16:65504", true}, {"f16:-65504", true}, {"f16:1e10", false}, {"f16:-70000", false}, {"f16:inf", true},
		{"f32:3.4e38", true}, {"f32:1e39", false}, {"f32:-inf", true}, {"f32:nan", true},
		{"f64:1e308", true}, {"f64:1e400", false}, {"u8:256", false},
	} {
		_, err := ParseArg(tt.spec, nil)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok=%v", tt.spec, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: %v", tt.spec, err)
		}
	}
}

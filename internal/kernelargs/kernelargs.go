// Package kernelargs parses et run-kernel's buffer, argument and dump
// specs (--buf NAME=SIZE[:INIT], --arg TYPE:VALUE, --dump NAME=FILE) and
// lays the arguments out as a kernel's params blob. It is apart from
// cmd/et so that its parsers can be fuzzed in a small binary.
package kernelargs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops/half"
)

// MaxBuf bounds one --buf (host memory holds a copy).
const MaxBuf = 16 << 30

// MaxParams bounds the params blob: the runtime takes at most its
// execution-context buffer, about 656 KiB, so a larger blob could never
// launch.
const MaxParams = 1 << 20

// Buf is one --buf NAME=SIZE[:INIT].
type Buf struct {
	Name string
	Size uint64
	// Init is zeros, pattern, or a file (.npy: its data; else raw bytes).
	Init string
}

// Arg is one --arg TYPE:VALUE: Size bytes aligned to Align, either fixed
// Data, the contents of File, or the device address of buffer Ref plus
// Off.
type Arg struct {
	Spec  string
	Type  string
	Data  []byte
	Ref   string
	Off   uint64
	File  string
	Size  int
	Align int
}

// Dump is one --dump NAME=FILE.
type Dump struct {
	Name string
	File string
}

// Field is one encoded argument of the params blob.
type Field struct {
	Offset    int    `json:"offset"`
	SizeBytes int    `json:"size_bytes"`
	Spec      string `json:"spec"`
	// Value is the encoded field, little-endian hex (resolved addresses
	// included).
	Value string `json:"value"`
}

// ParseSize reads a byte count: decimal or 0x hex, with an optional K, M
// or G (KiB, MiB, GiB) suffix; at most MaxBuf.
func ParseSize(s string) (uint64, error) { return infile.ParseSize(s, MaxBuf) }

// ParseBufs reads --buf specs; names must be unique.
func ParseBufs(specs []string) ([]Buf, error) {
	var out []Buf
	seen := map[string]bool{}
	for _, spec := range specs {
		name, rest, ok := strings.Cut(spec, "=")
		if !ok || name == "" || rest == "" {
			return nil, fmt.Errorf("--buf %q: want NAME=SIZE[:INIT]", spec)
		}
		if !validName(name) {
			return nil, fmt.Errorf("--buf %q: name %q: use letters, digits and _", spec, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("--buf %q: buffer %s given twice", spec, name)
		}
		seen[name] = true
		size, init, _ := strings.Cut(rest, ":")
		n, err := ParseSize(size)
		if err != nil {
			return nil, fmt.Errorf("--buf %q: %v", spec, err)
		}
		if init == "" {
			init = "zeros"
		}
		out = append(out, Buf{Name: name, Size: n, Init: init})
	}
	return out, nil
}

func validName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// scalarSizes are the --arg scalar types and their sizes in bytes.
var scalarSizes = map[string]int{"u8": 1, "i8": 1, "u16": 2, "i16": 2, "f16": 2, "u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}

// ParseArgs reads --arg specs; bufs holds the --buf names an @NAME may
// refer to. The blob they lay out (file: arguments counted as empty
// until read) may be at most MaxParams bytes.
func ParseArgs(specs []string, bufs map[string]bool) ([]Arg, error) {
	var out []Arg
	size := 0
	for _, spec := range specs {
		a, err := ParseArg(spec, bufs)
		if err != nil {
			return nil, fmt.Errorf("--arg %q: %v", spec, err)
		}
		out = append(out, a)
		if size = a.end(size, nil); size > MaxParams {
			return nil, fmt.Errorf("--arg %q: %v", spec, tooLarge(size))
		}
	}
	return out, nil
}

// Size is the length of the params blob args lay out (Encode), with
// files the contents of file: arguments (a missing one counts as empty).
func Size(args []Arg, files map[string][]byte) int {
	n := 0
	for _, a := range args {
		n = a.end(n, files)
	}
	return n
}

// end is where the blob ends after a, when it ended at n before.
func (a Arg) end(n int, files map[string][]byte) int {
	if a.Align > 1 {
		n = (n + a.Align - 1) / a.Align * a.Align
	}
	switch {
	case a.Ref != "":
		return n + 8
	case a.File != "":
		return n + len(files[a.File])
	}
	return n + len(a.Data)
}

// CheckSize refuses a params blob over MaxParams bytes.
func CheckSize(args []Arg, files map[string][]byte) error {
	if n := Size(args, files); n > MaxParams {
		return tooLarge(n)
	}
	return nil
}

func tooLarge(n int) error {
	return fmt.Errorf("the params blob would be %d bytes, over the %d KiB limit (the runtime takes about 656 KiB)", n, MaxParams>>10)
}

// ParseArg reads one --arg spec (its error does not repeat the spec).
func ParseArg(spec string, bufs map[string]bool) (Arg, error) {
	typ, val, ok := strings.Cut(spec, ":")
	if !ok || val == "" {
		return Arg{}, errors.New("want TYPE:VALUE (u32:7, u64:@NAME, f32:0.5, file:PATH, pad:N, align:N)")
	}
	a := Arg{Spec: spec, Type: typ}
	switch typ {
	case "file":
		a.File, a.Align = val, 1
		return a, nil
	case "pad", "align":
		n, err := strconv.ParseUint(val, 0, 32)
		if err != nil || n == 0 || n > 1<<20 || (typ == "align" && n&(n-1) != 0) {
			return Arg{}, fmt.Errorf("invalid %s %q (want a count > 0%s)", typ, val, map[bool]string{true: ", a power of two"}[typ == "align"])
		}
		if typ == "pad" {
			a.Data, a.Size, a.Align = make([]byte, n), int(n), 1
		} else {
			a.Align = int(n)
		}
		return a, nil
	}
	size, ok := scalarSizes[typ]
	if !ok {
		return Arg{}, fmt.Errorf("unknown type %q (want u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, file, pad or align)", typ)
	}
	a.Size, a.Align = size, size
	if strings.HasPrefix(val, "@") {
		if typ != "u64" {
			return Arg{}, fmt.Errorf("a buffer address is 64 bits: write u64:%s", val)
		}
		name, off, hasOff := strings.Cut(val[1:], "+")
		if !bufs[name] {
			return Arg{}, fmt.Errorf("no --buf named %q", name)
		}
		a.Ref = name
		if hasOff {
			n, err := strconv.ParseUint(off, 0, 64)
			if err != nil {
				return Arg{}, fmt.Errorf("invalid offset %q", off)
			}
			a.Off = n
		}
		return a, nil
	}
	a.Data = make([]byte, size)
	bad := func(err error) (Arg, error) {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return Arg{}, fmt.Errorf("invalid %s value %q: %v", typ, val, err)
	}
	switch typ[0] {
	case 'u':
		n, err := strconv.ParseUint(val, 0, size*8)
		if err != nil {
			return bad(err)
		}
		putUint(a.Data, n)
	case 'i':
		n, err := strconv.ParseInt(val, 0, size*8)
		if err != nil {
			return bad(err)
		}
		putUint(a.Data, uint64(n))
	case 'f':
		x, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return bad(err)
		}
		// A finite value the type cannot hold is out of range, as
		// u8:256 is; inf and nan given as such are kept.
		var bits uint64
		inf := false
		switch size {
		case 2:
			h := half.FromF32(float32(x))
			bits, inf = uint64(h), h&0x7fff == 0x7c00
		case 4:
			f := float32(x)
			bits, inf = uint64(math.Float32bits(f)), math.IsInf(float64(f), 0)
		default:
			bits = math.Float64bits(x)
		}
		if inf && !math.IsInf(x, 0) {
			return bad(strconv.ErrRange)
		}
		putUint(a.Data, bits)
	}
	return a, nil
}

// putUint writes the low len(b) bytes of v little-endian.
func putUint(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// ParseDumps reads --dump specs; each must name a --buf.
func ParseDumps(specs []string, bufs map[string]bool) ([]Dump, error) {
	var out []Dump
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("--dump %q: want NAME=FILE", spec)
		}
		if !bufs[name] {
			return nil, fmt.Errorf("--dump %q: no --buf named %q", spec, name)
		}
		out = append(out, Dump{Name: name, File: file})
	}
	return out, nil
}

// Encode lays the params blob out: each field aligned to its alignment
// (zero padding), little-endian. addrs holds the buffers' device
// addresses, files the contents of file: arguments.
func Encode(args []Arg, addrs map[string]uint64, files map[string][]byte) ([]byte, []Field) {
	var blob []byte
	fields := []Field{}
	for _, a := range args {
		for a.Align > 1 && len(blob)%a.Align != 0 {
			blob = append(blob, 0)
		}
		data := a.Data
		switch {
		case a.Ref != "":
			data = make([]byte, 8)
			putUint(data, addrs[a.Ref]+a.Off)
		case a.File != "":
			data = files[a.File]
		case a.Type == "align":
			continue
		}
		fields = append(fields, Field{Offset: len(blob), SizeBytes: len(data), Spec: a.Spec, Value: hexLE(data)})
		blob = append(blob, data...)
	}
	return blob, fields
}

// hexLE shows up to 16 bytes as a hex dump.
func hexLE(b []byte) string {
	const max = 16
	s := fmt.Sprintf("%x", b[:min(len(b), max)])
	if len(b) > max {
		s += "..."
	}
	return s
}

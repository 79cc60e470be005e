package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// The .npy format (NumPy's "format.rst"): the magic "\x93NUMPY", a major
// and a minor version byte, a little-endian header length (uint16 in
// version 1.0, uint32 in 2.0 and 3.0), then the header — a Python dict
// literal with the keys 'descr', 'fortran_order' and 'shape', padded with
// spaces and a final '\n' — then the raw data.
//
// et reads the dtypes <f4, <f2, <f8, <i4 and <i8 (and their '='/'|'
// native-order spellings, little-endian being the only byte order et runs
// on). <f8 is accepted and rounded to float32 because numpy's default
// dtype is float64 and np.save(path, np.random.rand(...)) is the common
// way to make a file. Big-endian data and fortran_order: True are refused
// with an error naming the file.

const npyMagic = "\x93NUMPY"

// maxNpyHeader bounds the header length we accept (numpy itself writes a
// few hundred bytes at most).
const maxNpyHeader = 1 << 20

// maxNpyElems bounds the element count a header may claim.
const maxNpyElems = 1 << 40

// Array is the content of a .npy file: its dtype (f4, f2, f8, i4 or i8,
// byte order stripped), its numpy shape (row-major, outermost first) and
// its raw little-endian data.
type Array struct {
	Dtype string
	Shape []int64
	Data  []byte
}

// Len is the element count (1 for a scalar of shape ()).
func (a *Array) Len() int64 {
	n := int64(1)
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// Float reports whether the dtype is a floating-point one.
func (a *Array) Float() bool { return a.Dtype[0] == 'f' }

// Float32s returns the elements as float32 (f2 widened, f8 rounded).
// It fails for integer dtypes.
func (a *Array) Float32s() ([]float32, error) {
	n := a.Len()
	out := make([]float32, n)
	switch a.Dtype {
	case "f4":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:]))
		}
	case "f2":
		for i := range out {
			out[i] = ops.F16ToF32(binary.LittleEndian.Uint16(a.Data[2*i:]))
		}
	case "f8":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:])))
		}
	default:
		return nil, fmt.Errorf("dtype <%s holds integers, want a float dtype (<f4, <f2 or <f8)", a.Dtype)
	}
	return out, nil
}

// Int64s returns the elements of an integer array. It fails for float
// dtypes.
func (a *Array) Int64s() ([]int64, error) {
	n := a.Len()
	out := make([]int64, n)
	switch a.Dtype {
	case "i4":
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(a.Data[4*i:])))
		}
	case "i8":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(a.Data[8*i:]))
		}
	default:
		return nil, fmt.Errorf("dtype <%s holds floats, want an integer dtype (<i4 or <i8)", a.Dtype)
	}
	return out, nil
}

// ReadNpyFile reads a .npy file. Errors name the file.
func ReadNpyFile(path string) (*Array, error) { return ReadNpyFileMax(path, maxNpyElems*8) }

// npyMaxDtype is the size of the largest dtype a .npy may hold (f8, i8).
const npyMaxDtype = 8

// ReadNpyFileMax is ReadNpyFile of a file whose data should be at most
// maxData bytes: a file larger than such a .npy can be (its header at
// most maxNpyHeader) is refused before it is read, so that a wrong path
// to a huge file costs nothing.
func ReadNpyFileMax(path string, maxData int64) (*Array, error) {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		// A FIFO would block the open, a device never end.
		return nil, &Error{File: path, Msg: "not a regular file"}
	}
	if limit := maxData + maxNpyHeader + 12; fi.Size() > limit {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%d bytes, more than a .npy of the %d data bytes wanted can be", fi.Size(), maxData)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	a, err := DecodeNpy(b)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return a, nil
}

// DecodeNpy parses the bytes of a .npy file. The data must be exactly as
// long as the header's shape and dtype say.
func DecodeNpy(b []byte) (*Array, error) {
	if len(b) < len(npyMagic)+2 || string(b[:len(npyMagic)]) != npyMagic {
		return nil, fmt.Errorf("not a .npy file (no \\x93NUMPY magic)")
	}
	major, minor := b[6], b[7]
	var hlen, off int
	switch major {
	case 1:
		if len(b) < 10 {
			return nil, fmt.Errorf("truncated .npy header")
		}
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("truncated .npy header")
		}
		n := binary.LittleEndian.Uint32(b[8:])
		if n > maxNpyHeader {
			return nil, fmt.Errorf(".npy header length %d is too large", n)
		}
		hlen, off = int(n), 12
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if len(b)-off < hlen {
		return nil, fmt.Errorf("truncated .npy header: %d bytes, header length says %d", len(b)-off, hlen)
	}
	h, err := parseNpyHeader(string(b[off : off+hlen]))
	if err != nil {
		return nil, fmt.Errorf("bad .npy header: %v", err)
	}
	if h.fortran {
		return nil, fmt.Errorf("fortran_order is True: et reads C-order (row-major) arrays only; save with np.ascontiguousarray(x)")
	}
	dtype, size, err := npyDtype(h.descr)
	if err != nil {
		return nil, err
	}
	a := &Array{Dtype: dtype, Shape: h.shape}
	n := int64(1)
	for _, d := range h.shape {
		if d < 0 {
			return nil, fmt.Errorf("bad .npy header: negative dimension %d", d)
		}
		if d != 0 && n > maxNpyElems/d {
			return nil, fmt.Errorf("bad .npy header: shape %v is too large", h.shape)
		}
		n *= d
	}
	data := b[off+hlen:]
	if want := n * int64(size); int64(len(data)) != want {
		return nil, fmt.Errorf("data is %d bytes, shape %s of <%s needs %d", len(data), npyShapeString(h.shape), dtype, want)
	}
	a.Data = data
	return a, nil
}

// npyDtype maps a descr to et's dtype name and its item size.
func npyDtype(descr string) (string, int, error) {
	if len(descr) < 2 {
		return "", 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	order, kind := descr[0], descr[1:]
	switch order {
	case '<', '=', '|':
	case '>':
		return "", 0, fmt.Errorf("big-endian dtype %q is not supported; save with x.astype('<%s')", descr, kind)
	default:
		kind = descr
	}
	switch kind {
	case "f4", "f2", "f8", "i4", "i8":
		return kind, int(kind[1] - '0'), nil
	}
	return "", 0, fmt.Errorf("unsupported dtype %q (want <f4, <f2, <f8, <i4 or <i8)", descr)
}

type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseNpyHeader parses the Python dict literal of a .npy header. It
// accepts exactly what numpy writes: string keys, a string descr, a
// True/False fortran_order and a tuple of non-negative ints as the shape,
// in any order, with optional trailing commas.
func parseNpyHeader(s string) (*npyHeader, error) {
	p := &pyParser{s: s}
	p.space()
	if !p.eat('{') {
		return nil, fmt.Errorf("want '{' at offset %d", p.i)
	}
	h := &npyHeader{}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("want ':' after key %q", key)
		}
		p.space()
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return nil, fmt.Errorf("descr: %v", err)
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(p.s[p.i:], "True"):
				h.fortran, p.i = true, p.i+4
			case strings.HasPrefix(p.s[p.i:], "False"):
				p.i += 5
			default:
				return nil, fmt.Errorf("fortran_order: want True or False")
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return nil, fmt.Errorf("shape: %v", err)
			}
		default:
			return nil, fmt.Errorf("unknown key %q", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return nil, fmt.Errorf("want ',' or '}' at offset %d", p.i)
		}
		break
	}
	if strings.TrimSpace(p.s[p.i:]) != "" {
		return nil, fmt.Errorf("unexpected text after the dict at offset %d", p.i)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	return h, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a '...' or "..." string without escapes (numpy never writes
// any in a header).
func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("want a quoted string at offset %d", p.i)
	}
	q := p.s[p.i]
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", fmt.Errorf("unterminated string at offset %d", p.i)
	}
	v := p.s[p.i+1 : p.i+1+j]
	if strings.ContainsRune(v, '\\') {
		return "", fmt.Errorf("escape sequences are not supported in %q", v)
	}
	p.i += j + 2
	return v, nil
}

// tuple reads (), (n,) or (n, m, ...).
func (p *pyParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, fmt.Errorf("want '(' at offset %d", p.i)
	}
	shape := []int64{}
	for {
		p.space()
		if p.eat(')') {
			return shape, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		// numpy on Windows once wrote 3L; accept and ignore the suffix.
		v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want a non-negative integer at offset %d", p.i)
		}
		p.i = j
		p.eat('L')
		shape = append(shape, v)
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat(')') {
			return nil, fmt.Errorf("want ',' or ')' at offset %d", p.i)
		}
		if len(shape) == 1 {
			return nil, fmt.Errorf("a 1-tuple needs a trailing comma: (%d,)", shape[0])
		}
		return shape, nil
	}
}

func npyShapeString(shape []int64) string {
	if len(shape) == 1 {
		return fmt.Sprintf("(%d,)", shape[0])
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// NpyShape is the numpy shape of a tensor of shape ne (DESIGN.md §4): ne
// with trailing 1s dropped, reversed. ne [4096, 7, 1, 1] is (7, 4096);
// ne [1, 1, 1, 1] is the scalar shape ().
func NpyShape(ne []int64) []int64 {
	n := len(ne)
	for n > 0 && ne[n-1] == 1 {
		n--
	}
	s := make([]int64, n)
	for i := 0; i < n; i++ {
		s[i] = ne[n-1-i]
	}
	return s
}

// shapeMatches reports whether a numpy shape describes a tensor of shape
// ne. Leading 1s of the numpy shape are ignored (they are ne's trailing
// 1s), so (1, 4096) matches ne [4096] as well as (4096,).
func shapeMatches(npy []int64, ne []int64) bool {
	for len(npy) > 0 && npy[0] == 1 {
		npy = npy[1:]
	}
	want := NpyShape(ne)
	if len(npy) != len(want) {
		return false
	}
	for i := range npy {
		if npy[i] != want[i] {
			return false
		}
	}
	return true
}

// EncodeNpyInts writes integers as a .npy of dtype <i4 (wide false) or
// <i8, with EncodeNpyF32's header rules.
func EncodeNpyInts(w io.Writer, shape []int64, data []int64, wide bool) error {
	descr, size := "<i4", 4
	if wide {
		descr, size = "<i8", 8
	}
	out := make([]byte, size*len(data))
	for i, v := range data {
		if wide {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		} else {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
		}
	}
	return encodeNpy(w, shape, len(data), descr, out)
}

// EncodeNpyF32 writes a version 1.0 .npy of dtype <f4 (version 2.0 if
// the header would not fit), with the header padded to a multiple of 64
// bytes as numpy does.
func EncodeNpyF32(w io.Writer, shape []int64, data []float32) error {
	out := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return encodeNpy(w, shape, len(data), "<f4", out)
}

func encodeNpy(w io.Writer, shape []int64, count int, descr string, out []byte) error {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if n != int64(count) {
		return fmt.Errorf("npy: %d values for shape %s", count, npyShapeString(shape))
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, npyShapeString(shape))
	var buf bytes.Buffer
	buf.WriteString(npyMagic)
	pre := len(npyMagic) + 2 + 2
	major := byte(1)
	if len(dict)+1+pre > 65535 {
		major, pre = 2, pre+2
	}
	total := pre + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	buf.WriteByte(major)
	buf.WriteByte(0)
	if major == 1 {
		binary.Write(&buf, binary.LittleEndian, uint16(hlen))
	} else {
		binary.Write(&buf, binary.LittleEndian, uint32(hlen))
	}
	buf.WriteString(dict)
	buf.WriteString(strings.Repeat(" ", pad))
	buf.WriteByte('\n')
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(out)
	return err
}

package kernelmap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Entry is one line of a kernel_id.json file: a kernel name and the
// process-global runtime KernelId it was loaded as.
type Entry struct {
	Name string `json:"name"`
	ID   int    `json:"id"`
}

// Map is a kernel_id.json map read as id → name. Names may repeat (one
// copy per device, each with its own id); ids are unique.
type Map struct {
	// Entries are the entries in file order, duplicates of an id removed
	// (the first one wins).
	Entries []Entry
	byID    map[int]string
	// Warnings are problems found while reading (duplicate ids, an empty
	// file); they never make Read fail.
	Warnings []string
}

// New returns a map holding entries; a later duplicate id is ignored.
func New(entries ...Entry) *Map {
	m := &Map{byID: make(map[int]string, len(entries))}
	for _, e := range entries {
		m.add(e)
	}
	return m
}

func (m *Map) add(e Entry) bool {
	if m.byID == nil {
		m.byID = make(map[int]string)
	}
	if old, ok := m.byID[e.ID]; ok {
		if old != e.Name {
			m.Warnings = append(m.Warnings, fmt.Sprintf("kernel id %d named both %q and %q; using %q", e.ID, old, e.Name, old))
		} else {
			m.Warnings = append(m.Warnings, fmt.Sprintf("kernel %q listed twice with id %d (ggml writes each load once)", e.Name, e.ID))
		}
		return false
	}
	if e.ID < 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("kernel %q has id %d: runtime kernel ids are never negative, no launch can match it", e.Name, e.ID))
	}
	m.byID[e.ID] = e.Name
	m.Entries = append(m.Entries, e)
	return true
}

// Len is the number of distinct ids.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.Entries)
}

// Name returns the kernel name of id.
func (m *Map) Name(id int) (string, bool) {
	if m == nil {
		return "", false
	}
	n, ok := m.byID[id]
	return n, ok
}

// Label returns the kernel name of id, or "kernel#<id>" when the map does
// not know it (or m is nil).
func (m *Map) Label(id int) string {
	if n, ok := m.Name(id); ok {
		return n
	}
	return "kernel#" + strconv.Itoa(id)
}

// Names returns the distinct kernel names, sorted.
func (m *Map) Names() []string {
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range m.Entries {
		if !seen[e.Name] {
			seen[e.Name] = true
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

// ParseError is a malformed kernel_id.json. It is an input error (exit 2).
type ParseError struct {
	File   string // may be empty
	Offset int64  // byte offset of the problem
	Msg    string
}

func (e *ParseError) Error() string {
	f := e.File
	if f == "" {
		f = "kernel map"
	}
	return fmt.Sprintf("parsing kernel map: %s: byte %d: %s", f, e.Offset, e.Msg)
}

// InputError marks ParseError as malformed input.
func (*ParseError) InputError() {}

// Read parses a kernel_id.json document: a JSON object of name → integer
// id. Duplicate names are kept (they belong to different devices); an
// empty document (0 bytes or only white space, as a crashed ggml run
// leaves) gives an empty map with a warning, not an error.
func Read(r io.Reader) (*Map, error) {
	return read(r, "")
}

// ReadFile reads the kernel map at path. A missing file is returned as an
// error wrapping fs.ErrNotExist, so callers can downgrade it to a warning.
func ReadFile(path string) (*Map, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		// A FIFO would block the open, a device never end.
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// ReadNamed is Read with errors naming file, for a map read by the caller.
func ReadNamed(r io.Reader, file string) (*Map, error) {
	return read(r, file)
}

func read(r io.Reader, file string) (*Map, error) {
	m := New()
	br := bufio.NewReader(r)
	// Sniff for an empty document first: json.Decoder reports EOF for it.
	for {
		b, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				m.Warnings = append(m.Warnings, "kernel map is empty (the run may have crashed before writing it)")
				return m, nil
			}
			return nil, err
		}
		if b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t' {
			br.ReadByte()
			continue
		}
		break
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	perr := func(msg string) error {
		return &ParseError{File: file, Offset: dec.InputOffset(), Msg: msg}
	}
	tokErr := func(err error) error {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return perr("unexpected end of file")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &ParseError{File: file, Offset: se.Offset, Msg: se.Error()}
		}
		return perr(err.Error())
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, tokErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, perr("want a JSON object of kernel name to id")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, tokErr(err)
		}
		name, ok := kt.(string)
		if !ok {
			return nil, perr("want a kernel name")
		}
		vt, err := dec.Token()
		if err != nil {
			return nil, tokErr(err)
		}
		num, ok := vt.(json.Number)
		if !ok {
			return nil, perr(fmt.Sprintf("kernel %q: id is not a number", name))
		}
		id, err := strconv.ParseInt(num.String(), 10, 32)
		if err != nil {
			return nil, perr(fmt.Sprintf("kernel %q: id %s is not an integer", name, num))
		}
		m.add(Entry{Name: name, ID: int(id)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, tokErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, perr("data after the closing brace")
	}
	return m, nil
}

// Write writes entries in ggml's kernel_id.json format: a JSON object with
// one "name": id line each, two-space indent, and a trailing newline.
// Names are escaped as JSON strings (ggml writes them raw; ELF base names
// need no escaping, so the bytes are the same).
func Write(w io.Writer, entries []Entry) error {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, e := range entries {
		name, _ := json.Marshal(e.Name)
		b.WriteString("  ")
		b.Write(name)
		b.WriteString(": ")
		b.WriteString(strconv.Itoa(e.ID))
		if i < len(entries)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// String returns a short description for logs.
func (m *Map) String() string {
	if m == nil {
		return "kernel map (none)"
	}
	var parts []string
	for _, e := range m.Entries {
		parts = append(parts, fmt.Sprintf("%d=%s", e.ID, e.Name))
	}
	return "kernel map {" + strings.Join(parts, ", ") + "}"
}

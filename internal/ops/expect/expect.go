// Package expect reads expected-failures files: the known defects of a
// device's kernels, each with the figure that was measured and why, so
// that a CI run stays green on them and turns red on anything else — a
// new failure, or a listed one that passes (it was fixed: remove the
// entry).
//
//	expected_failures:
//	  - case: norm                 # case name
//	    output: n_rows1            # output name, or "*" for every output of the case
//	    backend: sysemu            # optional: ref, sysemu or pcie (default: any)
//	    uberkernel: true           # optional: only with (true) or without (false) --uberkernel
//	    measured: "NMSE 2.1e-01 (limit 1e-07)"
//	    why: norm_f32 is wrong with few rows; ggml-et fails the same shapes
//
// The file is strict: unknown keys, a missing case, output, measured or
// why, and two entries for the same output are errors with a line number.
package expect

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Entry is one expected failure.
type Entry struct {
	Case   string
	Output string // "*" matches every output of the case
	// Backend is "" for any backend.
	Backend string
	// Uberkernel, when set, restricts the entry to runs with (true) or
	// without (false) --uberkernel.
	Uberkernel *bool
	Measured   string
	Why        string
	// Line is the entry's line in File.
	File string
	Line int
}

// Where is "file:line" of the entry.
func (e *Entry) Where() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Set is the entries of one file.
type Set struct {
	Entries []Entry
}

// Error is a malformed expected-failures file (bad input).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// InputError marks Error as bad user input (exit 2).
func (e *Error) InputError() {}

// maxFileBytes bounds what Load reads: an expected-failures file is a
// hand-written list, never megabytes.
const maxFileBytes = 4 << 20

// Load reads an expected-failures file.
func Load(path string) (*Set, error) {
	// Stat before opening: opening a FIFO for reading would block.
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + pathErr(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: "not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + pathErr(err)}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + pathErr(err)}
	}
	if len(b) > maxFileBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes", maxFileBytes)}
	}
	return Parse(path, b)
}

func pathErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse reads an expected-failures document; file names it in errors.
func Parse(file string, b []byte) (*Set, error) {
	errf := func(n *yaml.Node, format string, args ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if i := strings.Index(rest, ":"); i > 0 {
				if n, err := strconv.Atoi(rest[:i]); err == nil {
					line, msg = n, strings.TrimSpace(rest[i+1:])
				}
			}
		}
		return nil, &Error{File: file, Line: line, Msg: msg}
	}
	set := &Set{}
	if doc.Kind == 0 {
		return set, nil // empty file: no expected failures
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errf(root, "want a mapping with key expected_failures")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "expected_failures" {
			return nil, errf(k, "unknown key %q (want expected_failures)", k.Value)
		}
		list = v
	}
	if list == nil || (list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return set, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, errf(list, "expected_failures: want a list of entries")
	}
	seen := map[string]int{}
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, errf(item, "entry: want a mapping (case, output, measured, why)")
		}
		e := Entry{File: file, Line: item.Line}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, errf(v, "%s: want a scalar", k.Value)
			}
			switch k.Value {
			case "case":
				e.Case = v.Value
			case "output":
				e.Output = v.Value
			case "backend":
				switch v.Value {
				case "ref", "sysemu", "pcie":
					e.Backend = v.Value
				default:
					return nil, errf(v, "backend %q: want ref, sysemu or pcie", v.Value)
				}
			case "uberkernel":
				bv, err := strconv.ParseBool(v.Value)
				if err != nil || v.Tag != "!!bool" {
					return nil, errf(v, "uberkernel %q: want true or false", v.Value)
				}
				e.Uberkernel = &bv
			case "measured":
				e.Measured = v.Value
			case "why":
				e.Why = v.Value
			default:
				return nil, errf(k, "unknown key %q (want case, output, backend, uberkernel, measured, why)", k.Value)
			}
		}
		for _, req := range []struct{ name, val string }{{"case", e.Case}, {"output", e.Output}, {"measured", e.Measured}, {"why", e.Why}} {
			if strings.TrimSpace(req.val) == "" {
				return nil, errf(item, "entry has no %s", req.name)
			}
		}
		for _, key := range e.keys() {
			if prev, dup := seen[key]; dup {
				return nil, errf(item, "same case, output, backend and uberkernel as the entry at line %d", prev)
			}
		}
		for _, key := range e.keys() {
			seen[key] = e.Line
		}
		set.Entries = append(set.Entries, e)
	}
	return set, nil
}

// keys are the (case, output, backend, uberkernel) combinations an entry
// covers, for the duplicate check; "" stands for any backend.
func (e *Entry) keys() []string {
	ubers := []string{"false", "true"}
	if e.Uberkernel != nil {
		ubers = []string{strconv.FormatBool(*e.Uberkernel)}
	}
	var out []string
	for _, u := range ubers {
		out = append(out, strings.Join([]string{e.Case, e.Output, e.Backend, u}, "\x00"))
	}
	return out
}

// Run describes the run whose results are matched.
type Run struct {
	Backend    string
	Uberkernel bool
}

// Match returns the entry that expects output of case c to fail in run r,
// or nil. An entry naming the output wins over a "*" entry.
func (s *Set) Match(r Run, c, output string) *Entry {
	if s == nil {
		return nil
	}
	var wild *Entry
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Case != c || (e.Backend != "" && e.Backend != r.Backend) || (e.Uberkernel != nil && *e.Uberkernel != r.Uberkernel) {
			continue
		}
		switch e.Output {
		case output:
			return e
		case "*":
			if wild == nil {
				wild = e
			}
		}
	}
	return wild
}

// Unused lists the entries that apply to run r and name a case in ran
// (the cases that ran) but matched none of its outputs: a renamed output,
// or a typo, that would otherwise hide silently.
func (s *Set) Unused(r Run, ran map[string]bool, matched map[*Entry]bool) []*Entry {
	if s == nil {
		return nil
	}
	var out []*Entry
	for i := range s.Entries {
		e := &s.Entries[i]
		if !ran[e.Case] || matched[e] || (e.Backend != "" && e.Backend != r.Backend) || (e.Uberkernel != nil && *e.Uberkernel != r.Uberkernel) {
			continue
		}
		out = append(out, e)
	}
	return out
}

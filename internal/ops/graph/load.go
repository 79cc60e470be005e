package graph

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ainekko/et/internal/ops"
)

// Load reads and validates a case file (DESIGN.md §4). .npy paths in it
// are relative to the file's directory. Every error is an *Error of the
// form "file:line: message".
func Load(path string) (*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return LoadBytes(path, b, filepath.Dir(path))
}

// LoadBytes parses and validates a case from b. name labels errors; dir
// is the directory .npy paths are relative to.
func LoadBytes(name string, b []byte, dir string) (*Case, error) {
	l := &loader{file: name}
	c, err := l.load(b)
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	return c, nil
}

type loader struct {
	file string
}

func (l *loader) errf(n *yaml.Node, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return errorf(l.file, line, format, args...)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml syntax error into "file:line: msg".
func (l *loader) yamlError(err error) *Error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return errorf(l.file, line, "%s", m[2])
	}
	return errorf(l.file, 0, "%s", strings.TrimPrefix(msg, "yaml: "))
}

func (l *loader) load(b []byte) (*Case, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errorf(l.file, 0, "empty case file")
		}
		return nil, l.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, l.errf(&extra, "a case file holds one YAML document, found a second")
	} else if !errors.Is(err, io.EOF) {
		return nil, l.yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errorf(l.file, 0, "empty case file")
	}
	root := doc.Content[0]
	if err := l.noAliases(root, 0); err != nil {
		return nil, err
	}
	fields, err := l.mapping(root, "case", "name", "description", "seed", "tensors", "nodes", "outputs", "tolerance")
	if err != nil {
		return nil, err
	}
	c := &Case{File: l.file}
	var rawParams []map[string]any
	var paramLines []map[string]int
	for _, f := range fields {
		k, v := f.key.Value, f.val
		switch k {
		case "name":
			if c.Name, err = l.str(v, "name"); err != nil {
				return nil, err
			}
			if c.Name == "" {
				return nil, l.errf(v, "name: must not be empty")
			}
		case "description":
			if c.Description, err = l.str(v, "description"); err != nil {
				return nil, err
			}
		case "seed":
			s, msg := seedNode(v)
			if msg != "" {
				return nil, l.errf(v, "seed: %s", msg)
			}
			c.Seed = s
		case "tensors":
			if c.Tensors, err = l.tensors(v); err != nil {
				return nil, err
			}
		case "nodes":
			if c.Nodes, rawParams, paramLines, err = l.nodes(v); err != nil {
				return nil, err
			}
		case "outputs":
			c.outputsLine = v.Line
			switch v.Kind {
			case yaml.ScalarNode:
				s, err := l.str(v, "outputs")
				if err != nil {
					return nil, err
				}
				c.Outputs = []string{s}
			case yaml.SequenceNode:
				for _, e := range v.Content {
					s, err := l.str(e, "outputs")
					if err != nil {
						return nil, err
					}
					c.Outputs = append(c.Outputs, s)
				}
				if len(c.Outputs) == 0 {
					return nil, l.errf(v, "outputs: empty list (omit the field to compare the last node)")
				}
			default:
				return nil, l.errf(v, "outputs: want a list of node names, got %s", describe(v))
			}
		case "tolerance":
			if c.Tolerance, err = l.tolerance(v); err != nil {
				return nil, err
			}
		}
	}
	if c.Name == "" {
		return nil, l.errf(root, "missing required field name")
	}
	if err := validate(c, rawParams, paramLines); err != nil {
		return nil, err
	}
	return c, nil
}

// noAliases rejects anchors' uses (aliases and merge keys): they are not
// needed in case files and would let a small file expand enormously.
func (l *loader) noAliases(n *yaml.Node, depth int) error {
	if depth > 64 {
		return l.errf(n, "nesting is too deep")
	}
	if n.Kind == yaml.AliasNode {
		return l.errf(n, "YAML aliases (*%s) are not supported in case files", n.Value)
	}
	for _, c := range n.Content {
		if err := l.noAliases(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

type field struct{ key, val *yaml.Node }

// mapping checks that n is a mapping whose keys are strings from allowed,
// each at most once, and returns its fields in document order.
func (l *loader) mapping(n *yaml.Node, what string, allowed ...string) ([]field, error) {
	if n.Kind != yaml.MappingNode {
		return nil, l.errf(n, "%s: want a mapping, got %s", what, describe(n))
	}
	var out []field
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, l.errf(k, "%s: want a plain key, got %s", what, describe(k))
		}
		if line, dup := seen[k.Value]; dup {
			return nil, l.errf(k, "%s: duplicate key %q (first at line %d)", what, k.Value, line)
		}
		seen[k.Value] = k.Line
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, l.errf(k, "%s: unknown field %q (want %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		out = append(out, field{k, v})
	}
	return out, nil
}

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "an unexpected node"
}

func (l *loader) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", l.errf(n, "%s: want a string, got %s", what, describe(n))
	}
	return n.Value, nil
}

func (l *loader) float(n *yaml.Node, what string) (float64, error) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!float" || n.ShortTag() == "!!int") {
		var v float64
		if err := n.Decode(&v); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, nil
		}
	}
	return 0, l.errf(n, "%s: want a finite number, got %s", what, describe(n))
}

func (l *loader) int(n *yaml.Node, what string) (int64, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var v int64
		if err := n.Decode(&v); err == nil {
			return v, nil
		}
		return 0, l.errf(n, "%s: integer %s is out of range", what, n.Value)
	}
	return 0, l.errf(n, "%s: want an integer, got %s", what, describe(n))
}

func (l *loader) ints(n *yaml.Node, what string) ([]int64, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, l.errf(n, "%s: want a list of integers, got %s", what, describe(n))
	}
	out := make([]int64, 0, len(n.Content))
	for _, e := range n.Content {
		v, err := l.int(e, what)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (l *loader) tensors(n *yaml.Node) ([]TensorSpec, error) {
	fields, err := l.mapping(n, "tensors")
	if err != nil {
		return nil, err
	}
	var out []TensorSpec
	for _, f := range fields {
		name := f.key.Value
		if err := checkName(name); err != nil {
			return nil, l.errf(f.key, "tensors: %v", err)
		}
		what := "tensor " + name
		joinSplitCalls(f.val)
		tf, err := l.mapping(f.val, what, "type", "ne", "init")
		if err != nil {
			return nil, err
		}
		s := TensorSpec{Name: name, Line: f.key.Line}
		var typeNode, neNode, initNode *yaml.Node
		for _, g := range tf {
			switch g.key.Value {
			case "type":
				typeNode = g.val
			case "ne":
				neNode = g.val
			case "init":
				initNode = g.val
			}
		}
		if typeNode == nil {
			return nil, l.errf(f.val, "%s: missing required field type", what)
		}
		ts, err := l.str(typeNode, what+": type")
		if err != nil {
			return nil, err
		}
		if s.Type, err = ops.ParseType(ts); err != nil {
			return nil, l.errf(typeNode, "%s: %v", what, err)
		}
		if neNode == nil {
			return nil, l.errf(f.val, "%s: missing required field ne", what)
		}
		if s.Ne, err = l.ints(neNode, what+": ne"); err != nil {
			return nil, err
		}
		if err := checkShape(s.Type, s.Ne); err != nil {
			return nil, l.errf(neNode, "%s: %v", what, err)
		}
		if initNode != nil {
			if s.Init, err = l.init(initNode, what); err != nil {
				return nil, err
			}
			if s.Init.Func != "npy" {
				if err := checkInit(s.Init, s.Type, s.Ne); err != nil {
					return nil, l.errf(initNode, "%s: %v", what, err)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// joinSplitCalls repairs an init call written inside a flow mapping,
// {type: f32, ne: [8], init: uniform(-1, 1)}: YAML splits the flow
// mapping at the comma, giving init "uniform(-1" and a key "1)" with no
// value. When a plain init value has an unclosed '(', the following
// value-less plain keys are joined back onto it until it is balanced.
func joinSplitCalls(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	c := n.Content
	for i := 0; i+1 < len(c); i += 2 {
		k, v := c[i], c[i+1]
		if k.Value != "init" || v.Kind != yaml.ScalarNode || v.Style != 0 || !unbalanced(v.Value) {
			continue
		}
		j := i + 2
		val := v.Value
		for j+1 < len(c) && unbalanced(val) {
			nk, nv := c[j], c[j+1]
			if nk.Kind != yaml.ScalarNode || nk.Style != 0 || nv.Kind != yaml.ScalarNode || nv.ShortTag() != "!!null" || nv.Value != "" {
				break
			}
			val += ", " + nk.Value
			j += 2
		}
		if unbalanced(val) {
			return // leave it for ParseInit to report
		}
		v.Value, v.Tag = val, "!!str"
		n.Content = append(c[:i+2:i+2], c[j:]...)
		return
	}
}

func unbalanced(s string) bool { return strings.Count(s, "(") > strings.Count(s, ")") }

func (l *loader) init(n *yaml.Node, what string) (Init, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" {
			return Init{}, l.errf(n, "%s: init: want an expression such as uniform(-1, 1) or {npy: file.npy}, got %s", what, describe(n))
		}
		in, err := ParseInit(n.Value)
		if err != nil {
			return Init{}, l.errf(n, "%s: %v", what, err)
		}
		return in, nil
	case yaml.MappingNode:
		fs, err := l.mapping(n, what+": init", "npy")
		if err != nil {
			return Init{}, err
		}
		if len(fs) == 0 {
			return Init{}, l.errf(n, "%s: init: want {npy: file.npy}", what)
		}
		p, err := l.str(fs[0].val, what+": init: npy")
		if err != nil {
			return Init{}, err
		}
		if p == "" {
			return Init{}, l.errf(fs[0].val, "%s: init: npy: empty path", what)
		}
		return Init{Func: "npy", Npy: p}, nil
	}
	return Init{}, l.errf(n, "%s: init: want an expression or {npy: file.npy}, got %s", what, describe(n))
}

func (l *loader) nodes(n *yaml.Node) ([]Node, []map[string]any, []map[string]int, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nil, nil, l.errf(n, "nodes: want a list, got %s", describe(n))
	}
	var nodes []Node
	var raws []map[string]any
	var lines []map[string]int
	for i, e := range n.Content {
		what := fmt.Sprintf("node %d", i+1)
		if e.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(e.Content); j += 2 {
				if k, v := e.Content[j], e.Content[j+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
					what = "node " + v.Value
					break
				}
			}
		}
		fs, err := l.mapping(e, what, "name", "op", "src", "params", "inplace")
		if err != nil {
			return nil, nil, nil, err
		}
		nd := Node{Line: e.Line}
		raw := map[string]any{}
		pl := map[string]int{}
		var hasName, hasOp, hasSrc bool
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				if nd.Name, err = l.str(f.val, what+": name"); err != nil {
					return nil, nil, nil, err
				}
				hasName = true
				what = "node " + nd.Name
			}
		}
		for _, f := range fs {
			switch f.key.Value {
			case "op":
				s, err := l.str(f.val, what+": op")
				if err != nil {
					return nil, nil, nil, err
				}
				if _, ok := ops.Lookup(s); !ok {
					return nil, nil, nil, l.errf(f.val, "%s: %v", what, &ops.UnknownOpError{Name: s})
				}
				nd.Op = ops.Op(s)
				hasOp = true
			case "src":
				hasSrc = true
				switch f.val.Kind {
				case yaml.SequenceNode:
					for _, s := range f.val.Content {
						name, err := l.str(s, what+": src")
						if err != nil {
							return nil, nil, nil, err
						}
						nd.Src = append(nd.Src, name)
					}
				default:
					return nil, nil, nil, l.errf(f.val, "%s: src: want a list of tensor or node names, got %s", what, describe(f.val))
				}
			case "inplace":
				if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!bool" {
					return nil, nil, nil, l.errf(f.val, "%s: inplace: want true or false, got %s", what, describe(f.val))
				}
				if err := f.val.Decode(&nd.InPlace); err != nil {
					return nil, nil, nil, l.errf(f.val, "%s: inplace: bad boolean %s", what, f.val.Value)
				}
			case "params":
				pfs, err := l.mapping(f.val, what+": params")
				if err != nil {
					return nil, nil, nil, err
				}
				for _, p := range pfs {
					v, err := l.paramValue(p.val, what+": params: "+p.key.Value)
					if err != nil {
						return nil, nil, nil, err
					}
					raw[p.key.Value] = v
					pl[p.key.Value] = p.key.Line
				}
			}
		}
		switch {
		case !hasName:
			return nil, nil, nil, l.errf(e, "%s: missing required field name", what)
		case !hasOp:
			return nil, nil, nil, l.errf(e, "%s: missing required field op", what)
		case !hasSrc:
			return nil, nil, nil, l.errf(e, "%s: missing required field src", what)
		}
		nodes = append(nodes, nd)
		raws = append(raws, raw)
		lines = append(lines, pl)
	}
	return nodes, raws, lines, nil
}

// paramValue decodes a parameter value into the raw Go types the op
// catalog normalizes: int64, float64, bool, string or []any of those.
func (l *loader) paramValue(n *yaml.Node, what string) (any, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int":
			var v int64
			if err := n.Decode(&v); err != nil {
				return nil, l.errf(n, "%s: integer %s is out of range", what, n.Value)
			}
			return v, nil
		case "!!float":
			return l.float(n, what)
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return nil, l.errf(n, "%s: bad boolean %s", what, n.Value)
			}
			return v, nil
		case "!!str":
			return n.Value, nil
		}
		return nil, l.errf(n, "%s: want a value, got %s", what, describe(n))
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, l.errf(e, "%s: want a flat list, got %s inside it", what, describe(e))
			}
			v, err := l.paramValue(e, what)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, l.errf(n, "%s: want a number, name or list, got %s", what, describe(n))
}

// seedNode reads a seed: a YAML integer (decimal, 0x, 0o) in [0, 2^64).
// msg says what is wrong, or is empty.
func seedNode(v *yaml.Node) (uint64, string) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		return 0, "want a non-negative integer, got " + describe(v)
	}
	var s uint64
	if err := v.Decode(&s); err != nil {
		return 0, "want a non-negative integer below 2^64, got " + v.Value
	}
	return s, ""
}

// ParseSeed parses a seed given on the command line exactly as the case
// file's seed: field is parsed, so both accept the same spellings.
func ParseSeed(text string) (uint64, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) != 1 || strings.ContainsAny(text, "\n#") {
		return 0, fmt.Errorf("want a non-negative integer, got %q", text)
	}
	s, msg := seedNode(doc.Content[0])
	if msg != "" {
		return 0, errors.New(msg)
	}
	return s, nil
}

func (l *loader) tolerance(n *yaml.Node) (Tolerance, error) {
	fs, err := l.mapping(n, "tolerance", "nmse", "max_abs", "graph_nmse")
	if err != nil {
		return Tolerance{}, err
	}
	var t Tolerance
	for _, f := range fs {
		v, err := l.float(f.val, "tolerance: "+f.key.Value)
		if err != nil {
			return Tolerance{}, err
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return Tolerance{}, l.errf(f.val, "tolerance: %s: want a finite number >= 0, got %s", f.key.Value, f.val.Value)
		}
		switch f.key.Value {
		case "nmse":
			t.NMSE = &v
		case "max_abs":
			t.MaxAbs = &v
		case "graph_nmse":
			t.GraphNMSE = &v
		}
	}
	return t, nil
}

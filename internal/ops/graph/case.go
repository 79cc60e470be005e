package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Case is one op or graph of ops to run: leaves, nodes in topological
// order, the outputs to compare and save, and an optional tolerance.
type Case struct {
	Name        string
	Description string
	// Seed makes the leaf data deterministic (default 0).
	Seed uint64
	// File is where the case came from: a file name, the case string, or
	// "run-op flags". It prefixes error messages.
	File string
	// Dir is the directory .npy paths are relative to.
	Dir     string
	Tensors []TensorSpec
	Nodes   []Node
	// Outputs names the nodes that are compared and saved; it defaults
	// to the last node.
	Outputs   []string
	Tolerance Tolerance
	// OpDesc and Vars are the case as test-backend-ops names it, for
	// its filters (Filter): the output op as ggml_op_desc prints it
	// (MUL_MAT, SILU, SWIGLU, ...) and the displayed parameters (the text
	// between the parentheses of a case string). Case strings and test
	// files set them; YAML cases leave them empty.
	OpDesc string
	Vars   string

	outputsLine int // line of the outputs field, for errors
}

// TensorSpec is one leaf: its type, its shape in ggml order (1 to 4 dims,
// ne0 innermost) and how it is filled.
type TensorSpec struct {
	Name string
	Type ops.Type
	Ne   []int64
	// Init is how the tensor is filled; the zero Init means the default
	// (uniform(-1, 1) for float types, zeros for integer types).
	Init Init
	Line int
}

// Node is one op application. Params are normalized by the op catalog
// (defaults filled in); Type and Ne are the result's type and shape as the
// catalog infers them.
type Node struct {
	Name   string
	Op     ops.Op
	Src    []string
	Params ops.Params
	Type   ops.Type
	Ne     [ops.MaxDims]int64
	// InPlace makes the result a view of the first source (ggml's
	// *_inplace ops, test-backend-ops inplace=1): the op writes into its
	// source's memory, and ggml-et launches with dst.data == src0.data.
	InPlace bool
	Line    int
}

// Tolerance overrides the per-op comparison thresholds; nil fields keep
// the default. GraphNMSE, when set, bounds the end-to-end drift of every
// output (the device's value against the reference math chained from the
// leaves); without it drift is reported, not judged.
type Tolerance struct {
	NMSE      *float64
	MaxAbs    *float64
	GraphNMSE *float64
}

// Leaf returns the leaf spec of that name, or nil.
func (c *Case) Leaf(name string) *TensorSpec {
	for i := range c.Tensors {
		if c.Tensors[i].Name == name {
			return &c.Tensors[i]
		}
	}
	return nil
}

// Node returns the node of that name, or nil.
func (c *Case) Node(name string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

// maxLeafElems bounds the element count of one leaf (2^36: 256 GiB of
// f32), so that an absurd shape is an input error, not an out-of-memory
// crash.
const maxLeafElems = 1 << 36

// checkName validates a tensor or node name: it becomes a file name
// (<output>.npy) when outputs are saved, so it is restricted to letters,
// digits, '_', '-' and '.', not starting with '.'.
func checkName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if len(s) > 128 {
		return fmt.Errorf("name %.20q... is longer than 128 characters", s)
	}
	if s[0] == '.' || s[0] == '-' {
		return fmt.Errorf("name %q must start with a letter, digit or '_'", s)
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("name %q: only letters, digits, '_', '-' and '.' are allowed", s)
		}
	}
	return nil
}

// checkShape validates a leaf shape for type t.
func checkShape(t ops.Type, ne []int64) error {
	if len(ne) < 1 || len(ne) > ops.MaxDims {
		return fmt.Errorf("ne has %d dims, want 1 to %d", len(ne), ops.MaxDims)
	}
	n := int64(1)
	for i, d := range ne {
		if d <= 0 {
			return fmt.Errorf("ne%d = %d, want a positive size", i, d)
		}
		if d > maxLeafElems || n > maxLeafElems/d {
			return fmt.Errorf("shape %v is too large (more than 2^36 elements)", ne)
		}
		n *= d
	}
	if bs := int64(t.BlockSize()); ne[0]%bs != 0 {
		return fmt.Errorf("ne0 = %d is not a multiple of the %s block size %d", ne[0], t, bs)
	}
	return nil
}

// validate checks a case built by the loader, a case string or flags:
// names, topology, sources, params (normalized in place through the op
// catalog) and result shapes. Errors carry c.File and the line of the
// offending tensor or node (0 outside YAML). rawParams[i] holds node i's
// parameters as decoded; paramLines, when present, the line of each.
func validate(c *Case, rawParams []map[string]any, paramLines []map[string]int) error {
	if c.Name == "" {
		return errorf(c.File, 1, "missing required field name")
	}
	seen := map[string]int{} // name -> line
	shapes := map[string]*ops.Tensor{}
	for i := range c.Tensors {
		s := &c.Tensors[i]
		if err := checkName(s.Name); err != nil {
			return errorf(c.File, s.Line, "tensor: %v", err)
		}
		if l, dup := seen[s.Name]; dup {
			return errorf(c.File, s.Line, "duplicate name %q (first defined at line %d)", s.Name, l)
		}
		seen[s.Name] = s.Line
		if err := checkShape(s.Type, s.Ne); err != nil {
			return errorf(c.File, s.Line, "tensor %s: %v", s.Name, err)
		}
		if s.Init.Func != "" && s.Init.Func != "npy" {
			if err := checkInit(s.Init, s.Type, s.Ne); err != nil {
				return errorf(c.File, s.Line, "tensor %s: %v", s.Name, err)
			}
		}
		x := ops.NewShape(s.Type, s.Ne...)
		x.Name = s.Name
		shapes[s.Name] = x
	}
	if len(c.Nodes) == 0 {
		return errorf(c.File, 1, "no nodes: a case needs at least one op")
	}
	later := map[string]int{}
	for i := range c.Nodes {
		later[c.Nodes[i].Name] = c.Nodes[i].Line
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if err := checkName(n.Name); err != nil {
			return errorf(c.File, n.Line, "node: %v", err)
		}
		if l, dup := seen[n.Name]; dup {
			return errorf(c.File, n.Line, "duplicate name %q (first defined at line %d)", n.Name, l)
		}
		info, ok := ops.Lookup(string(n.Op))
		if !ok {
			return errorf(c.File, n.Line, "node %s: %v", n.Name, &ops.UnknownOpError{Name: string(n.Op)})
		}
		n.Op = info.Name
		if len(n.Src) < info.MinSrc || len(n.Src) > info.MaxSrc() {
			want := fmt.Sprint(info.MinSrc)
			if info.MaxSrc() != info.MinSrc {
				want = fmt.Sprintf("%d to %d", info.MinSrc, info.MaxSrc())
			}
			return errorf(c.File, n.Line, "node %s: %s takes %s sources [%s], got %d", n.Name, info.Name, want, strings.Join(info.Srcs, ", "), len(n.Src))
		}
		srcs := make([]*ops.Tensor, len(n.Src))
		for j, s := range n.Src {
			x, ok := shapes[s]
			switch {
			case ok:
				srcs[j] = x
			case s == n.Name:
				return errorf(c.File, n.Line, "node %s: source %s is the node itself", n.Name, s)
			case later[s] != 0 || c.Node(s) != nil:
				return errorf(c.File, n.Line, "node %s: source %s is defined later (line %d): nodes must be in topological order", n.Name, s, later[s])
			default:
				return errorf(c.File, n.Line, "node %s: unknown source %q (not a tensor or an earlier node)", n.Name, s)
			}
		}
		var raw map[string]any
		if i < len(rawParams) {
			raw = rawParams[i]
		}
		p, err := info.Normalize(raw)
		if err != nil {
			line := n.Line
			var pe *ops.ParamError
			if errors.As(err, &pe) && i < len(paramLines) && paramLines[i][pe.Param] != 0 {
				line = paramLines[i][pe.Param]
			}
			return errorf(c.File, line, "node %s: %v", n.Name, err)
		}
		n.Params = p
		res, err := standInResult(info, srcs, p)
		if err != nil {
			return errorf(c.File, n.Line, "node %s: %v", n.Name, err)
		}
		res.Name = n.Name
		if n.InPlace {
			if err := checkInPlace(info, srcs, res); err != nil {
				return errorf(c.File, n.Line, "node %s: inplace: %v", n.Name, err)
			}
		}
		n.Type, n.Ne = res.Type, res.Ne
		shapes[n.Name] = res
		seen[n.Name] = n.Line
	}
	if len(c.Outputs) == 0 {
		c.Outputs = []string{c.Nodes[len(c.Nodes)-1].Name}
	}
	outs := map[string]bool{}
	for _, o := range c.Outputs {
		if c.Node(o) == nil {
			if c.Leaf(o) != nil {
				return errorf(c.File, c.outputsLine, "output %q is a leaf tensor, not a node", o)
			}
			return errorf(c.File, c.outputsLine, "output %q is not a node", o)
		}
		if outs[o] {
			return errorf(c.File, c.outputsLine, "output %q is listed twice", o)
		}
		outs[o] = true
	}
	return nil
}

// checkInPlace checks that a node can write its result into its first
// source: a non-view op whose result has that source's type and shape.
func checkInPlace(info *ops.OpInfo, srcs []*ops.Tensor, res *ops.Tensor) error {
	if info.View {
		return fmt.Errorf("%s is a view op; it writes nothing", info.Name)
	}
	if len(srcs) == 0 {
		return fmt.Errorf("%s has no source to write into", info.Name)
	}
	if a := srcs[0]; a.Type != res.Type || a.Ne != res.Ne {
		return fmt.Errorf("the result %s %s differs from the first source %s %s", res.Type, res.ShapeString(), a.Type, a.ShapeString())
	}
	return nil
}

// standInResult infers a node's result type and shape from its sources,
// tensors without data (ops.NewShape, whose BufLen is what a view checks
// its bounds against): a view's bounds are checked exactly as the run
// will check them, and nothing is allocated.
func standInResult(info *ops.OpInfo, srcs []*ops.Tensor, p ops.Params) (*ops.Tensor, error) {
	if info.View {
		return info.ViewOf(srcs[0], p)
	}
	t, ne, err := info.Shape(srcs, p)
	if err != nil {
		return nil, err
	}
	return ops.NewShape(t, ne[:]...), nil
}

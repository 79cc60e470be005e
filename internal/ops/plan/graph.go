package plan

import (
	"fmt"

	"github.com/ainekko/et/internal/ops"
)

// Value is one tensor of a graph: a leaf (input data) or the result of a
// node. Every value has a host tensor T; a view shares its Buf with the
// value that owns the memory (Base), and T.Offs is the byte offset of its
// element 0 inside that memory. A node's result has no data (Buf nil,
// ops.NewShape): planning needs only types, shapes and T.BufLen, and a
// run computes into memory of its own. Device buffers mirror this: one device
// allocation per Base value, a view's device address is base + T.Offs.
type Value struct {
	Name string
	T    *ops.Tensor
	// Base is the index of the value that owns T's memory (itself unless
	// T is a view).
	Base int
	// Node is the index of the producing node, or -1 for a leaf.
	Node int
}

// IsView reports whether the value is a view of another value's memory.
func (v *Value) IsView(self int) bool { return v.Base != self }

// Node is one op of a graph.
type Node struct {
	Name   string
	Op     ops.Op
	Info   *ops.OpInfo
	Src    []int // value indices, in the op's source order
	Params ops.Params
	Out    int // value index of the result
	// InPlace: the result is a view of the first source (ggml's *_inplace
	// ops, set_rows, set with inplace): the op writes into that source's
	// memory, and the launch has dst.data == src0.data, as on ggml-et.
	InPlace bool
	// Line is the line of the node in its case file (0 when unknown),
	// for error messages.
	Line int
}

// Graph is a small ggml graph: leaves, nodes in topological order and the
// outputs to compare.
type Graph struct {
	Values  []Value
	Nodes   []Node
	Outputs []int
	byName  map[string]int
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{byName: map[string]int{}} }

// Lookup finds a value by name.
func (g *Graph) Lookup(name string) (int, bool) {
	i, ok := g.byName[name]
	return i, ok
}

func (g *Graph) add(v Value) (int, error) {
	if _, dup := g.byName[v.Name]; dup {
		return 0, fmt.Errorf("duplicate tensor name %q", v.Name)
	}
	i := len(g.Values)
	g.Values = append(g.Values, v)
	g.byName[v.Name] = i
	return i, nil
}

// AddLeaf adds an input tensor. t must own its buffer (not be a view).
func (g *Graph) AddLeaf(name string, t *ops.Tensor) (int, error) {
	t.Name = name
	return g.add(Value{Name: name, T: t, Base: len(g.Values), Node: -1})
}

// AddNode adds a node: it checks the op, the sources and the params
// (normalizing them), infers the result's type and shape and gives it a
// host tensor without data (ops.NewShape), or builds the view. Errors
// are input errors naming the node.
func (g *Graph) AddNode(name string, op ops.Op, src []string, raw map[string]any, line int) (int, error) {
	return g.AddNodeInPlace(name, op, src, raw, line, false)
}

// AddNodeInPlace is AddNode with the result written into the first
// source when inplace is set (ggml's *_inplace ops): the result is a view
// of src0 with src0's layout, and its memory is src0's. The result must
// have src0's type and shape. set_rows, and set with its inplace param,
// are in place whatever inplace says, as in ggml (their result is
// ggml_view_tensor(a)).
func (g *Graph) AddNodeInPlace(name string, op ops.Op, src []string, raw map[string]any, line int, inplace bool) (int, error) {
	info, ok := ops.Lookup(string(op))
	if !ok {
		return 0, &NodeError{Node: name, Line: line, Err: &ops.UnknownOpError{Name: string(op)}}
	}
	nerr := func(err error) error { return &NodeError{Node: name, Line: line, Err: err} }
	n := Node{Name: name, Op: info.Name, Info: info, Line: line}
	srcs := make([]*ops.Tensor, len(src))
	for i, s := range src {
		j, ok := g.byName[s]
		if !ok {
			return 0, nerr(fmt.Errorf("unknown source %q", s))
		}
		n.Src = append(n.Src, j)
		srcs[i] = g.Values[j].T
	}
	p, err := info.Normalize(raw)
	if err != nil {
		return 0, nerr(err)
	}
	n.Params = p
	var t *ops.Tensor
	base := len(g.Values)
	if info.View {
		if err := info.CheckSources(srcs); err != nil {
			return 0, nerr(err)
		}
		if t, err = info.ViewOf(srcs[0], p); err != nil {
			return 0, nerr(err)
		}
		base = g.Values[n.Src[0]].Base
	} else {
		typ, ne, err := info.Shape(srcs, p)
		if err != nil {
			return 0, nerr(err)
		}
		if info.Name == ops.OpSetRows || (info.Name == ops.OpSet && p.Bool("inplace")) {
			inplace = true
		}
		if inplace && len(srcs) == 0 {
			return 0, nerr(fmt.Errorf("in place: %s has no source to write into", info.Name))
		}
		switch {
		case info.Name == ops.OpCpy && len(srcs) == 2:
			// ggml_cpy(x, dst): the result is a view of dst.
			v := *srcs[1]
			t, base = &v, g.Values[n.Src[1]].Base
		case inplace:
			a := srcs[0]
			if a.Type != typ || a.Ne != ne {
				return 0, nerr(fmt.Errorf("in place: the result %s %v differs from the first source %s %s", typ, ne, a.Type, a.ShapeString()))
			}
			v := *a
			t, base = &v, g.Values[n.Src[0]].Base
			n.InPlace = true
		default:
			t = ops.NewShape(typ, ne[:]...)
		}
	}
	t.Name = name
	n.Out = len(g.Values)
	if _, err := g.add(Value{Name: name, T: t, Base: base, Node: len(g.Nodes)}); err != nil {
		return 0, nerr(err)
	}
	g.Nodes = append(g.Nodes, n)
	return n.Out, nil
}

// SetOutputs names the values to compare; with no names, the last node's
// result is the output.
func (g *Graph) SetOutputs(names []string) error {
	g.Outputs = g.Outputs[:0]
	if len(names) == 0 {
		if len(g.Nodes) == 0 {
			return fmt.Errorf("graph has no nodes")
		}
		g.Outputs = append(g.Outputs, g.Nodes[len(g.Nodes)-1].Out)
		return nil
	}
	for _, name := range names {
		i, ok := g.byName[name]
		if !ok {
			return fmt.Errorf("unknown output %q", name)
		}
		g.Outputs = append(g.Outputs, i)
	}
	return nil
}

// Uses counts, per value, the nodes that read it (ggml's n_children),
// plus one for a graph output (ggml's OUTPUT flag keeps it alive).
func (g *Graph) Uses() []int {
	uses := make([]int, len(g.Values))
	for _, n := range g.Nodes {
		for _, s := range n.Src {
			uses[s]++
		}
	}
	return uses
}

// IsOutput reports whether value i is a graph output.
func (g *Graph) IsOutput(i int) bool {
	for _, o := range g.Outputs {
		if o == i {
			return true
		}
	}
	return false
}

// NodeError is an error in one node of a graph: an input error.
type NodeError struct {
	Node string
	Line int
	Err  error
}

func (e *NodeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: node %s: %v", e.Line, e.Node, e.Err)
	}
	return fmt.Sprintf("node %s: %v", e.Node, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// InputError marks NodeError as bad user input (exit 2).
func (e *NodeError) InputError() {}

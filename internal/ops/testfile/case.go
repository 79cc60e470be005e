package testfile

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

// viewOps are the ops test-export-graph-ops leaves out (nothing runs).
var viewOps = map[string]bool{"NONE": true, "VIEW": true, "RESHAPE": true, "PERMUTE": true, "TRANSPOSE": true}

// Case builds the line's case: its sources as leaves (strided ones as a
// view of a buffer leaf), the op as one node, the output's type and shape
// checked against the line's, inputs initialised as test_generic_op
// initialises them, and test_generic_op's NMSE limit. file names the test
// file. Errors are *graph.Error with the file and line.
func (op *Op) Case(file string, m *abi.Manifest) (*graph.Case, error) {
	fail := func(format string, args ...any) error {
		return &graph.Error{File: file, Line: op.Line, Msg: op.OpDesc(m) + ": " + fmt.Sprintf(format, args...)}
	}
	opName, ok := m.OpName(op.Op)
	if !ok {
		return nil, fail("op %d is not a ggml op of the ABI manifest (%s)", op.Op, m.GGMLDescribe())
	}
	if viewOps[opName] {
		return nil, fail("a view op: there is nothing to run (test-export-graph-ops leaves view ops out)")
	}
	info, ok := ops.Lookup(strings.ToLower(opName))
	if !ok || info.View {
		return nil, fail("et does not model op %s", opName)
	}
	outType, ok := m.TypeFromValue(op.Type)
	if !ok {
		return nil, fail("type %d is not a ggml type of the ABI manifest", op.Type)
	}
	srcTypes := make([]ops.Type, len(op.Srcs))
	for i, s := range op.Srcs {
		if srcTypes[i], ok = m.TypeFromValue(s.Type); !ok {
			return nil, fail("source %d: type %d is not a ggml type of the ABI manifest", i, s.Type)
		}
	}
	d := &decoder{op: op, m: m, info: info, outType: outType, srcTypes: srcTypes}
	raw := d.params()
	if d.err != nil {
		return nil, fail("%v", d.err)
	}
	for i, w := range op.OpParams {
		if w != 0 && !d.used[i] {
			return nil, fail("op_params[%d] = %d: et cannot express it for %s", i, w, opName)
		}
	}
	order := sourceOrder(info.Name, len(op.Srcs))
	if err := d.checkDropped(order); err != nil {
		return nil, fail("%v", err)
	}

	c := &graph.Case{
		File:   file,
		OpDesc: op.OpDesc(m),
		Vars:   op.Vars(m),
	}
	name := op.Name
	if name == "" {
		name = "-"
	}
	c.Name = fmt.Sprintf("%s:%d %s %s", file, op.Line, c.OpDesc, name)
	c.Description = c.OpDesc + "(" + c.Vars + ")"
	var rawParams []map[string]any
	var srcNames []string
	for k, gi := range order {
		s := op.Srcs[gi]
		t := srcTypes[gi]
		leaf := fmt.Sprintf("src%d", gi)
		init := d.init(info.Name, k, gi, t)
		if s.nonContiguous(t) {
			nodes, err := stridedSource(c, leaf, t, s, init, op.Line)
			if err != nil {
				return nil, fail("source %d: %v", gi, err)
			}
			for _, n := range nodes {
				rawParams = append(rawParams, n.raw)
			}
			srcNames = append(srcNames, c.Nodes[len(c.Nodes)-1].Name)
			continue
		}
		c.Tensors = append(c.Tensors, graph.TensorSpec{Name: leaf, Type: t, Ne: s.Ne[:], Init: init, Line: op.Line})
		srcNames = append(srcNames, leaf)
	}
	out := outName(op.Name, c)
	c.Nodes = append(c.Nodes, graph.Node{Name: out, Op: info.Name, Src: srcNames, Line: op.Line})
	rawParams = append(rawParams, raw)
	c.Outputs = []string{out}
	limit := maxNMSE(info.Name, op)
	c.Tolerance.NMSE = &limit
	if err := graph.Build(c, rawParams); err != nil {
		return nil, err
	}
	res := c.Node(out)
	if (info.Name == ops.OpCont || info.Name == ops.OpCpy) && res.Type == outType && res.Ne != op.Ne && nelem(res.Ne) == nelem(op.Ne) {
		// ggml_cont_4d and ggml_cpy give the result the line's shape; et's
		// cont and cpy keep the source's, so a reshape follows (the
		// output is judged on the cont or cpy node, same bytes).
		rs := out + "_reshaped"
		c.Nodes = append(c.Nodes, graph.Node{Name: rs, Op: ops.OpReshape, Src: []string{out}, Line: op.Line})
		rawParams = append(rawParams, map[string]any{"ne": op.Ne[:]})
		c.Outputs = []string{rs}
		if err := graph.Build(c, rawParams); err != nil {
			return nil, err
		}
		res = c.Node(rs)
	}
	if res.Type != outType || res.Ne != op.Ne {
		return nil, fail("et's %s of these sources is %s %v, the line says %s %v", info.Name, res.Type, res.Ne, outType, op.Ne)
	}
	return c, nil
}

// sourceOrder maps et's sources (in the catalog's order) to the line's
// ggml sources. SET_ROWS keeps ggml's legacy order src = [b, c, a] (rows,
// indices, destination); et's is [dst, src, idx]. CPY's src[1] is its
// destination, which et's cpy does not take (the result is a new tensor
// of the line's type and shape, as in test_generic_op).
func sourceOrder(op ops.Op, n int) []int {
	switch {
	case op == ops.OpSetRows && n == 3:
		return []int{2, 0, 1}
	case op == ops.OpCpy && n == 2:
		return []int{0}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

// outName is the node's name as a case name: the ggml name with the
// characters case names do not allow replaced by '_', or "out".
func outName(name string, c *graph.Case) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" || s[0] == '.' || s[0] == '-' || c.Leaf(s) != nil || c.Node(s) != nil {
		return "out"
	}
	return s
}

type rawNode struct{ raw map[string]any }

// stridedSource adds a strided source: a 1-D buffer leaf sized as
// test_generic_op sizes it, and a view of it at offset 0 with the line's
// ne and nb. A view whose nb0 is not the element size is built as a
// view with a unit-stride dimension first, then a permute.
func stridedSource(c *graph.Case, name string, t ops.Type, s Source, init graph.Init, line int) ([]rawNode, error) {
	ts, bs := uint64(t.TypeSize()), uint64(t.BlockSize())
	for d := range 4 {
		if s.Ne[d] <= 0 {
			return nil, fmt.Errorf("ne%d = %d, want a positive size", d, s.Ne[d])
		}
		if s.Nb[d] > 1<<40 {
			return nil, fmt.Errorf("nb%d = %d is too large", d, s.Nb[d])
		}
	}
	var total uint64
	if bs == 1 {
		total = ts
		for d := range 4 {
			total += uint64(s.Ne[d]-1) * s.Nb[d]
		}
	} else {
		total = uint64(s.Ne[0]) * s.Nb[0] / bs
		for d := 1; d < 4; d++ {
			total += uint64(s.Ne[d]-1) * s.Nb[d]
		}
	}
	elems := (total*bs + ts - 1) / ts
	elems = (elems + bs - 1) / bs * bs
	if elems > 1<<36 {
		return nil, fmt.Errorf("a buffer of %d elements is too large", elems)
	}
	// A row stride under the row's bytes makes rows overlap: the view
	// then holds more elements than its buffer, which ggml-et's kernels
	// refuse as a fault. (Views that overlap across permuted dimensions
	// are real llama views and stay.)
	if s.Nb[0] == ts {
		row := uint64(s.Ne[0]) * ts / bs
		for d := 1; d < 4; d++ {
			if s.Ne[d] > 1 && s.Nb[d] < row {
				return nil, fmt.Errorf("nb%d = %d is smaller than a row (ne0 %d: %d bytes): the rows overlap, which ggml-et's kernels refuse", d, s.Nb[d], s.Ne[0], row)
			}
		}
	}
	buf := name + "_buf"
	c.Tensors = append(c.Tensors, graph.TensorSpec{Name: buf, Type: t, Ne: []int64{int64(elems)}, Init: init, Line: line})
	// k is the dimension that becomes the view's dim 0: dim 0 itself when
	// its stride is the element (block) size, else one that has it.
	k := -1
	for d := range 4 {
		if s.Nb[d] == ts && (d == 0 || bs == 1) {
			k = d
			break
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("nb = %v: no dimension has the element stride %d, which et's views need", s.Nb, ts)
	}
	ne, nb := s.Ne, s.Nb
	ne[0], ne[k] = ne[k], ne[0]
	nb[0], nb[k] = nb[k], nb[0]
	view := map[string]any{"ne": ne[:], "nb": []int64{int64(nb[1]), int64(nb[2]), int64(nb[3])}, "offset": int64(0)}
	if k == 0 {
		c.Nodes = append(c.Nodes, graph.Node{Name: name, Op: ops.OpView, Src: []string{buf}, Line: line})
		return []rawNode{{view}}, nil
	}
	c.Nodes = append(c.Nodes, graph.Node{Name: name + "_view", Op: ops.OpView, Src: []string{buf}, Line: line})
	axes := []int64{0, 1, 2, 3}
	axes[0], axes[k] = int64(k), 0
	c.Nodes = append(c.Nodes, graph.Node{Name: name, Op: ops.OpPermute, Src: []string{name + "_view"}, Line: line})
	return []rawNode{{view}, {map[string]any{"axes": axes}}}, nil
}

// maxNMSE is test_generic_op's max_nmse_err.
func maxNMSE(op ops.Op, o *Op) float64 {
	switch op {
	case ops.OpMulMat, ops.OpMulMatID, ops.OpIm2col, ops.OpConv2D, ops.OpSetRows, ops.OpCpy:
		return 5e-4
	case ops.OpSoftMax:
		return 1e-6
	case ops.OpRWKVWKV7:
		return 5e-3
	case ops.OpFlashAttnExt:
		kv := float64(1)
		if len(o.Srcs) > 1 {
			kv = float64(o.Srcs[1].Ne[1])
		}
		return 5e-4 * max(1.0, kv/20000.0)
	}
	return 1e-7
}

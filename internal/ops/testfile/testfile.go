// Package testfile reads llama.cpp's exported graph ops: the text file
// that test-export-graph-ops (formerly llama-export-graph-ops) writes
// from a model's graphs and test-backend-ops --test-file reads. Each line
// is one op:
//
//	op type ne0 ne1 ne2 ne3 n_params p0 .. p(n_params-1) n_src
//	    { type ne0 ne1 ne2 ne3 nb0 nb1 nb2 nb3 } * n_src  name
//
// op and type are raw ggml enum values of the ggml version the file was
// written with (et maps them through its ABI manifest); the params are the
// node's raw int32 op_params words (floats as their bit patterns); the
// sources are ggml's src[0..n_src-1] in ggml's order. A source whose nb
// differs from the contiguous strides is a strided view at offset 0 of a
// buffer sized from ne and nb; nb0 = 0 means contiguous. The name is the
// node's name ("-" when it had none); anything after it on the line is
// ignored, as test-backend-ops ignores it (ggml names can hold spaces).
//
// Parse turns every line into one graph.Case that builds the graph
// test-backend-ops' test_generic_op builds for it and initialises its
// inputs as that test does. A line that cannot be read or that et cannot
// express is an error naming the file and line; the other lines still
// give their cases.
//
// testfile imports internal/ops, internal/ops/abi and internal/ops/graph
// only; it never prints or exits.
package testfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

// Limits of the format (GGML_MAX_OP_PARAMS / 4 and GGML_MAX_SRC).
const (
	maxParams = abi.NumOpParams
	maxSrc    = 10
)

// Op is one parsed line of a test file, before it becomes a case.
type Op struct {
	Line     int
	Op       int32
	Type     int32
	Ne       [4]int64
	NParams  int
	OpParams [maxParams]int32
	Srcs     []Source
	// Name is the node name as test-backend-ops reads it (one token; ""
	// for "-").
	Name string
}

// Source is one source tensor of a line.
type Source struct {
	Type int32
	Ne   [4]int64
	Nb   [4]uint64
}

// Parse reads a test file. name is the file name (it labels the cases and
// the errors). Every line gives a case or an error (*graph.Error, with the
// line); blank lines are skipped.
func Parse(name string, data []byte, m *abi.Manifest) (cases []*graph.Case, errs []error) {
	for i, text := range strings.Split(string(data), "\n") {
		text = strings.TrimRight(text, "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		line := i + 1
		op, err := ParseLine(text)
		if err != nil {
			errs = append(errs, &graph.Error{File: name, Line: line, Msg: err.Error()})
			continue
		}
		op.Line = line
		c, err := op.Case(name, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, c)
	}
	return cases, errs
}

// ParseLine reads the numbers and the name of one line.
func ParseLine(text string) (*Op, error) {
	t := &tokens{f: strings.Fields(text)}
	op := &Op{}
	op.Op = t.enum("op")
	op.Type = t.enum("type")
	for d := range 4 {
		op.Ne[d] = t.int64(fmt.Sprintf("ne%d", d))
	}
	op.NParams = int(t.count("n_params", maxParams))
	for i := 0; i < op.NParams; i++ {
		op.OpParams[i] = t.int32(fmt.Sprintf("op_params[%d]", i))
	}
	n := int(t.count("n_src", maxSrc))
	for s := 0; s < n && t.err == nil; s++ {
		var src Source
		src.Type = t.enum(fmt.Sprintf("src%d type", s))
		for d := range 4 {
			src.Ne[d] = t.int64(fmt.Sprintf("src%d ne%d", s, d))
		}
		for d := range 4 {
			src.Nb[d] = t.uint64(fmt.Sprintf("src%d nb%d", s, d))
		}
		op.Srcs = append(op.Srcs, src)
	}
	if t.err != nil {
		return nil, t.err
	}
	if t.i < len(t.f) {
		op.Name = t.f[t.i]
		if op.Name == "-" {
			op.Name = ""
		}
	}
	return op, nil
}

// tokens reads the space-separated numbers of a line; the first error
// sticks.
type tokens struct {
	f   []string
	i   int
	err error
}

func (t *tokens) next(what string) (string, bool) {
	if t.err != nil {
		return "", false
	}
	if t.i >= len(t.f) {
		t.err = fmt.Errorf("line ends before %s (field %d)", what, t.i+1)
		return "", false
	}
	s := t.f[t.i]
	t.i++
	return s, true
}

func (t *tokens) fail(what, s, want string) {
	t.err = fmt.Errorf("field %d (%s) = %q: want %s", t.i, what, s, want)
}

func (t *tokens) enum(what string) int32 {
	s, ok := t.next(what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		t.fail(what, s, "a ggml enum value (a non-negative integer)")
	}
	return int32(v)
}

func (t *tokens) int64(what string) int64 {
	s, ok := t.next(what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.fail(what, s, "an integer")
	}
	return v
}

func (t *tokens) int32(what string) int32 {
	s, ok := t.next(what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		t.fail(what, s, "an int32 (op_params are raw int32 words)")
	}
	return int32(v)
}

func (t *tokens) uint64(what string) uint64 {
	s, ok := t.next(what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.fail(what, s, "a byte stride (a non-negative integer)")
	}
	return v
}

func (t *tokens) count(what string, limit int64) int64 {
	s, ok := t.next(what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > limit {
		t.fail(what, s, fmt.Sprintf("a count from 0 to %d", limit))
		return 0
	}
	return v
}

// ContiguousNb is ggml's contiguous strides of a type and shape.
func ContiguousNb(t ops.Type, ne [4]int64) [4]uint64 {
	var nb [4]uint64
	nb[0] = uint64(t.TypeSize())
	nb[1] = nb[0] * uint64(ne[0]/int64(t.BlockSize()))
	nb[2] = nb[1] * uint64(ne[1])
	nb[3] = nb[2] * uint64(ne[2])
	return nb
}

// nonContiguous is test-backend-ops' is_non_contiguous: nb0 = 0 means
// contiguous; otherwise any stride that differs from the contiguous one.
func (s Source) nonContiguous(t ops.Type) bool {
	return s.Nb[0] != 0 && s.Nb != ContiguousNb(t, s.Ne)
}

// Vars is the op's parameters as test-backend-ops displays them (the -p
// filter's text): name=…,type=…,ne=[…],op_params=[i:v,…],sources=…, with
// the type names of the manifest (the raw value when it has none).
func (op *Op) Vars(m *abi.Manifest) string {
	var b strings.Builder
	if op.Name != "" {
		b.WriteString("name=" + op.Name + ",")
	}
	b.WriteString("type=" + typeName(m, op.Type))
	fmt.Fprintf(&b, ",ne=[%d,%d,%d,%d]", op.Ne[0], op.Ne[1], op.Ne[2], op.Ne[3])
	b.WriteString(",op_params=[")
	first := true
	for i, v := range op.OpParams {
		if v != 0 {
			if !first {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d:%d", i, v)
			first = false
		}
	}
	b.WriteString("],sources=")
	for i, s := range op.Srcs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s[%d,%d,%d,%d]", typeName(m, s.Type), s.Ne[0], s.Ne[1], s.Ne[2], s.Ne[3])
		if t, ok := m.TypeFromValue(s.Type); ok && s.nonContiguous(t) {
			fmt.Fprintf(&b, "nb[%d,%d,%d,%d]", s.Nb[0], s.Nb[1], s.Nb[2], s.Nb[3])
		}
	}
	return b.String()
}

func typeName(m *abi.Manifest, v int32) string {
	if t, ok := m.TypeFromValue(v); ok {
		return t.String()
	}
	return "type" + strconv.Itoa(int(v))
}

// OpDesc is the op as ggml_op_desc names it: the unary or GLU function
// for UNARY and GLU, else the op name; "op<N>" for a value the manifest
// does not know.
func (op *Op) OpDesc(m *abi.Manifest) string {
	name, ok := m.OpName(op.Op)
	if !ok {
		return "op" + strconv.Itoa(int(op.Op))
	}
	switch name {
	case "UNARY":
		if u, ok := m.UnaryName(op.OpParams[0]); ok {
			return u
		}
	case "GLU":
		if g, ok := m.GLUName(op.OpParams[0]); ok {
			return g
		}
	}
	return name
}

// f32 is an op_params word as the float it holds.
func f32(w int32) float64 { return float64(math.Float32frombits(uint32(w))) }

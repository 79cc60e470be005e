package graph

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// FromFlags builds a one-node case from the flags of
// `et run-op OP --src ... --param ...`:
//
//   - op is a catalog op name (mul_mat, rms_norm, ...), or a unary or glu
//     sub-op name (silu, swiglu), which stands for op unary or glu with
//     param op set to it;
//   - each src is NAME=TYPE:NE0[xNE1[xNE2[xNE3]]][:INIT], in the op's
//     source order; INIT is an init expression (uniform(-1,1)) or a path
//     ending in .npy (relative to the working directory);
//   - each param is KEY=VALUE, VALUE being a number, true/false, a name
//     or a list of integers (1,2,0,3 or [1,2,0,3]).
//
// The node is named "out". Errors name the offending flag.
func FromFlags(op string, srcs []string, params []string) (*Case, error) {
	c := &Case{Name: op, File: "run-op " + op}
	raw := map[string]any{}
	lop := strings.ToLower(op)
	if _, ok := ops.Lookup(op); !ok {
		switch {
		case slices.Contains(ops.UnaryOps, lop):
			op, raw["op"] = string(ops.OpUnary), lop
		case slices.Contains(ops.GLUOps, lop):
			op, raw["op"] = string(ops.OpGLU), lop
		default:
			return nil, &Error{File: c.File, Msg: (&ops.UnknownOpError{Name: op}).Error() + " (or a unary or glu op name such as silu or swiglu)"}
		}
	}
	n := Node{Name: "out", Op: ops.Op(op)}
	for _, s := range srcs {
		spec, err := parseSrcFlag(s)
		if err != nil {
			return nil, &Error{File: "--src " + s, Msg: err.Error()}
		}
		c.Tensors = append(c.Tensors, spec)
		n.Src = append(n.Src, spec.Name)
	}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, &Error{File: "--param " + p, Msg: "want KEY=VALUE"}
		}
		if _, dup := raw[k]; dup {
			return nil, &Error{File: "--param " + p, Msg: fmt.Sprintf("%s given twice", k)}
		}
		raw[k] = flagValue(strings.TrimSpace(v))
	}
	c.Nodes = []Node{n}
	if err := validate(c, []map[string]any{raw}, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// parseSrcFlag parses NAME=TYPE:SHAPE[:INIT].
func parseSrcFlag(s string) (TensorSpec, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		return TensorSpec{}, fmt.Errorf("want NAME=TYPE:NE0xNE1 (e.g. x=f32:4096x7)")
	}
	if err := checkName(name); err != nil {
		return TensorSpec{}, err
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) < 2 {
		return TensorSpec{}, fmt.Errorf("want NAME=TYPE:NE0xNE1 (e.g. x=f32:4096x7)")
	}
	t, err := ops.ParseType(parts[0])
	if err != nil {
		return TensorSpec{}, err
	}
	var ne []int64
	for _, d := range strings.Split(strings.ToLower(parts[1]), "x") {
		v, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
		if err != nil {
			return TensorSpec{}, fmt.Errorf("bad shape %q: want sizes separated by x, e.g. 4096x7", parts[1])
		}
		ne = append(ne, v)
	}
	if err := checkShape(t, ne); err != nil {
		return TensorSpec{}, err
	}
	spec := TensorSpec{Name: name, Type: t, Ne: ne}
	if len(parts) == 3 {
		in := strings.TrimSpace(parts[2])
		if strings.HasSuffix(in, ".npy") {
			spec.Init = Init{Func: "npy", Npy: in}
		} else {
			if spec.Init, err = ParseInit(in); err != nil {
				return TensorSpec{}, err
			}
			if err := checkInit(spec.Init, t, ne); err != nil {
				return TensorSpec{}, err
			}
		}
	}
	return spec, nil
}

// flagValue converts a --param value to the raw types the op catalog
// normalizes: int64, float64, bool, []any of int64 (lists), or string.
func flagValue(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	list := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if strings.Contains(v, ",") || list != v {
		var out []any
		for _, e := range strings.Split(list, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(e), 10, 64)
			if err != nil {
				return v
			}
			out = append(out, n)
		}
		return out
	}
	return v
}

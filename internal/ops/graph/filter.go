package graph

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Filter selects cases as test-backend-ops' -o and -p options do.
//
// Ops is -o: a comma-separated list of op names (MUL_MAT, SILU, ...) or
// full case strings (MUL_MAT(type_a=f16,...)). A name matches the case's
// op (ggml_op_desc of its output: the unary or GLU op for UNARY and GLU
// nodes), ignoring case; a case string matches the whole
// OP(vars) exactly. The list is split as test-backend-ops splits it: an
// entry that has a '(' before the next comma runs up to the first comma
// after the first ')'.
//
// Params is -p: a regular expression searched for in the case's
// displayed parameters (Case.Vars; a YAML case, which has none, is matched
// on its name).
//
// A YAML graph matches an op name when any of its nodes has that op. The
// zero Filter matches every case.
type Filter struct {
	Ops    string
	Params *regexp.Regexp
}

// NewFilter builds a Filter from the text of the two options; an empty
// string leaves that part open. A bad regular expression is an *Error.
func NewFilter(opsList, params string) (Filter, error) {
	f := Filter{Ops: opsList}
	if params != "" {
		re, err := regexp.Compile(params)
		if err != nil {
			return Filter{}, &Error{File: "--params", Msg: fmt.Sprintf("bad regular expression %q: %v", params, strings.TrimPrefix(err.Error(), "error parsing regexp: "))}
		}
		f.Params = re
	}
	return f, nil
}

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return f.Ops == "" && f.Params == nil }

// Match reports whether the case passes both parts of the filter.
func (f Filter) Match(c *Case) bool {
	if f.Params != nil {
		vars := c.Vars
		if c.OpDesc == "" {
			vars = c.Name
		}
		if !f.Params.MatchString(vars) {
			return false
		}
	}
	if f.Ops == "" {
		return true
	}
	descs := []string{c.OpDesc}
	full := c.OpDesc + "(" + c.Vars + ")"
	if c.OpDesc == "" {
		descs = descs[:0]
		for i := range c.Nodes {
			descs = append(descs, NodeOpDesc(&c.Nodes[i]))
		}
		full = ""
	}
	for _, e := range splitOpsFilter(f.Ops) {
		if strings.Contains(e, "(") {
			if full != "" && e == full {
				return true
			}
			continue
		}
		for _, d := range descs {
			if strings.EqualFold(e, d) {
				return true
			}
		}
	}
	return false
}

// Apply returns the cases that match, in order.
func (f Filter) Apply(cases []*Case) []*Case {
	if f.Empty() {
		return cases
	}
	var out []*Case
	for _, c := range cases {
		if f.Match(c) {
			out = append(out, c)
		}
	}
	return out
}

// splitOpsFilter splits a -o list as test-backend-ops' matches_filter
// walks it.
func splitOpsFilter(s string) []string {
	var out []string
	for s != "" {
		comma := strings.IndexByte(s, ',')
		lp := strings.IndexByte(s, '(')
		if lp >= 0 && (comma < 0 || lp < comma) {
			comma = -1
			if rp := strings.IndexByte(s, ')'); rp >= 0 {
				if c := strings.IndexByte(s[rp:], ','); c >= 0 {
					comma = rp + c
				}
			}
		}
		if comma < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:comma])
		s = s[comma+1:]
	}
	return out
}

// NodeOpDesc is a node's op as ggml_op_desc names it: the upper-case ggml
// op name, or for unary and GLU nodes their function (SILU, SWIGLU).
func NodeOpDesc(n *Node) string {
	if n.Op == ops.OpUnary || n.Op == ops.OpGLU {
		if s := n.Params.Str("op"); s != "" {
			return strings.ToUpper(s)
		}
	}
	return strings.ToUpper(string(n.Op))
}

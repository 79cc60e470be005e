package graph

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ainekko/et/internal/ops"
)

// EncodeCase writes c as a case file (docs/case-format.md) that Load
// reads back into the same case: its leaves with the inits given by name
// in inits (a leaf not in inits keeps its own), its nodes with their
// normalized params, outputs and tolerance. Saving a run's inputs as
// .npy files and pointing inits at them (Init{Func: "npy", Npy: path})
// gives a case that replays exactly that run.
func EncodeCase(w io.Writer, c *Case, inits map[string]Init) error {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { doc.Content = append(doc.Content, str(k), v) }
	add("name", str(c.Name))
	if c.Description != "" {
		add("description", str(c.Description))
	}
	if c.Seed != 0 {
		add("seed", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(c.Seed, 10)})
	}
	if len(c.Tensors) > 0 {
		ts := &yaml.Node{Kind: yaml.MappingNode}
		for _, t := range c.Tensors {
			in, ok := inits[t.Name]
			if !ok {
				in = t.Init
			}
			spec := flowMap()
			mapAdd(spec, "type", str(t.Type.String()))
			mapAdd(spec, "ne", intList(t.Ne))
			if in.Func != "" {
				v, err := initNode(in)
				if err != nil {
					return fmt.Errorf("tensor %s: %w", t.Name, err)
				}
				mapAdd(spec, "init", v)
			}
			ts.Content = append(ts.Content, str(t.Name), spec)
		}
		add("tensors", ts)
	}
	nodes := &yaml.Node{Kind: yaml.SequenceNode}
	for _, n := range c.Nodes {
		m := flowMap()
		mapAdd(m, "name", str(n.Name))
		mapAdd(m, "op", str(string(n.Op)))
		src := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range n.Src {
			src.Content = append(src.Content, str(s))
		}
		mapAdd(m, "src", src)
		if len(n.Params) > 0 {
			p, err := paramsNode(n.Params)
			if err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
			mapAdd(m, "params", p)
		}
		if n.InPlace {
			mapAdd(m, "inplace", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		nodes.Content = append(nodes.Content, m)
	}
	add("nodes", nodes)
	if len(c.Outputs) > 0 {
		outs := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, o := range c.Outputs {
			outs.Content = append(outs.Content, str(o))
		}
		add("outputs", outs)
	}
	tol := flowMap()
	for _, f := range []struct {
		key string
		v   *float64
	}{{"nmse", c.Tolerance.NMSE}, {"max_abs", c.Tolerance.MaxAbs}, {"graph_nmse", c.Tolerance.GraphNMSE}} {
		if f.v != nil {
			mapAdd(tol, f.key, floatNode(*f.v))
		}
	}
	if len(tol.Content) > 0 {
		add("tolerance", tol)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return err
	}
	return enc.Close()
}

func flowMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }

func mapAdd(m *yaml.Node, k string, v *yaml.Node) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
}

func intList(v []int64) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, x := range v {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(x, 10)})
	}
	return n
}

// floatNode is a float as YAML reads it back bit for bit (the shortest
// repr that round-trips; .inf, -.inf, .nan).
func floatNode(f float64) *yaml.Node {
	v := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(v, ".eEn") {
		v += ".0" // 32.0: plainly a float, no explicit tag
	}
	switch {
	case math.IsInf(f, 1):
		v = ".inf"
	case math.IsInf(f, -1):
		v = "-.inf"
	case math.IsNaN(f):
		v = ".nan"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: v}
}

// initNode writes an init as the case format spells it.
func initNode(in Init) (*yaml.Node, error) {
	if in.Func == "npy" {
		m := flowMap()
		mapAdd(m, "npy", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: in.Npy})
		return m, nil
	}
	s := in.String()
	if _, err := ParseInit(s); err != nil {
		return nil, fmt.Errorf("init %s cannot be written as a case file init: %w", s, err)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}, nil
}

// paramsNode writes normalized params (float64, int64, bool, string,
// []int64, ops.Type), sorted by name.
func paramsNode(p ops.Params) (*yaml.Node, error) {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := flowMap()
	for _, k := range keys {
		var v *yaml.Node
		switch x := p[k].(type) {
		case float64:
			v = floatNode(x)
		case int64:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(x, 10)}
		case bool:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
		case string:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		case []int64:
			v = intList(x)
		case ops.Type:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x.String()}
		default:
			return nil, fmt.Errorf("param %s: value %v of type %T cannot be written", k, x, x)
		}
		mapAdd(m, k, v)
	}
	return m, nil
}

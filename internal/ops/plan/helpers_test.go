package plan

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// gb builds a test graph; every step fails the test on error.
type gb struct {
	t testing.TB
	g *Graph
}

func newGB(t testing.TB) *gb { return &gb{t: t, g: NewGraph()} }

func (b *gb) leaf(name string, typ ops.Type, ne ...int64) *gb {
	b.t.Helper()
	if _, err := b.g.AddLeaf(name, ops.New(typ, ne...)); err != nil {
		b.t.Fatalf("leaf %s: %v", name, err)
	}
	return b
}

func (b *gb) node(name, op string, src []string, params map[string]any) *gb {
	b.t.Helper()
	if _, err := b.g.AddNode(name, ops.Op(op), src, params, 0); err != nil {
		b.t.Fatalf("node %s: %v", name, err)
	}
	return b
}

func (b *gb) outputs(names ...string) *gb {
	b.t.Helper()
	if err := b.g.SetOutputs(names); err != nil {
		b.t.Fatalf("outputs: %v", err)
	}
	return b
}

// nodeIndex finds a node by name.
func (b *gb) nodeIndex(name string) int {
	b.t.Helper()
	for i, n := range b.g.Nodes {
		if n.Name == name {
			return i
		}
	}
	b.t.Fatalf("no node %s", name)
	return -1
}

func (b *gb) value(name string) int {
	b.t.Helper()
	i, ok := b.g.Lookup(name)
	if !ok {
		b.t.Fatalf("no value %s", name)
	}
	return i
}

func (b *gb) build(uber bool) *Plan {
	b.t.Helper()
	if len(b.g.Outputs) == 0 {
		b.outputs()
	}
	p, err := Build(b.g, abi.Default(), Options{Uberkernel: uber})
	if err != nil {
		b.t.Fatalf("Build: %v", err)
	}
	return p
}

// hasReasons checks that every want substring occurs in some reason.
func hasReasons(t testing.TB, reasons []Reason, want ...string) {
	t.Helper()
	hasTexts(t, Texts(reasons), want...)
}

// hasTexts checks that every want is part of some text of got.
func hasTexts(t testing.TB, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, r := range got {
			if strings.Contains(r, w) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no reason contains %q; reasons: %q", w, got)
		}
	}
}

// stepOf returns the step that computes node name.
func stepOf(t testing.TB, p *Plan, name string) *Step {
	t.Helper()
	for i := range p.Steps {
		for _, n := range p.Steps[i].Nodes {
			if p.Graph.Nodes[n].Name == name {
				return &p.Steps[i]
			}
		}
	}
	t.Fatalf("no step computes %s", name)
	return nil
}

package plan

import (
	"fmt"
	"sort"

	"github.com/ainekko/et/internal/ops/abi"
)

// Build plans graph g the way ggml_backend_et_graph_compute walks it
// (reference/ggml-et-backend.md §1.1): view ops are skipped (StepView);
// at each other node the fusions are tried first, in ggml-et's order
// (RMS_NORM+MUL, then MUL_MAT+ADD); otherwise the node is checked with
// Supports: an unsupported node becomes a StepFallback carrying the
// reasons, a supported one a StepLaunch with its kernel, params layout,
// tensor fields, scalars and uberkernel batchability (or a StepNoop, for
// a CPY of 0 elements). m nil means the embedded manifest.
//
// Errors are manifest problems only: a chosen kernel with no params
// layout in the manifest, or an enum value it lacks.
func Build(g *Graph, m *abi.Manifest, opts Options) (*Plan, error) {
	if g == nil {
		return nil, fmt.Errorf("plan: no graph")
	}
	if m == nil {
		m = abi.Default()
	}
	p := &Plan{Graph: g, Manifest: m, Uberkernel: opts.Uberkernel, ShireMask: opts.ShireMask, ForceShireMask: opts.ForceShireMask}
	if p.ShireMask == 0 {
		p.ShireMask = FullShireMask
	}
	p.Verdicts = make([]Verdict, len(g.Nodes))
	for i := range g.Nodes {
		p.Verdicts[i] = Supports(g, i, m)
	}
	uses := g.Uses()
	for i := 0; i < len(g.Nodes); i++ {
		n := &g.Nodes[i]
		if n.Info != nil && n.Info.View {
			p.Steps = append(p.Steps, Step{Nodes: []int{i}, Kind: StepView, Verdict: p.Verdicts[i]})
			continue
		}
		v := p.Verdicts[i]
		var missed []string
		if v.Supported {
			fu, fc, why := tryFusion(g, i, uses, p.Verdicts)
			missed = why
			if fu != nil {
				s := Step{Nodes: []int{i, i + 1}, Kind: StepLaunch, Verdict: v, Fusion: fu.name, DstField: "dst", FusionMissed: missed}
				fu.build(fc, &s)
				if err := p.finishLaunch(&s); err != nil {
					return nil, &BuildError{Node: n.Name, Err: err}
				}
				p.Steps = append(p.Steps, s)
				i++
				continue
			}
		}
		s, err := p.nodeStep(i, v)
		if err != nil {
			return nil, &BuildError{Node: n.Name, Err: err}
		}
		s.FusionMissed = missed
		p.Steps = append(p.Steps, s)
	}
	return p, nil
}

// nodeStep plans one unfused, non-view node.
func (p *Plan) nodeStep(i int, v Verdict) (Step, error) {
	s := Step{Nodes: []int{i}, Verdict: v}
	if !v.Supported {
		s.Kind = StepFallback
		return s, nil
	}
	x := newNodeCtx(p.Graph, p.Manifest, i)
	r, _ := ruleFor(x.n.Op) // Supports accepted the node, so the row exists
	if r.noop != nil {
		if note, ok := r.noop(x); ok {
			s.Kind, s.Note = StepNoop, note
			return s, nil
		}
	}
	s.Kind = StepLaunch
	s.Kernel = r.kernel(x)
	s.DstField = r.dst
	if s.DstField == "" {
		s.DstField = "dst"
	}
	fields := map[string]int{s.DstField: x.n.Out}
	rf := r.fields
	if r.fieldsFor != nil {
		rf = r.fieldsFor(x)
	}
	for j, f := range rf {
		if f != "" && x.has(j) {
			fields[f] = x.n.Src[j]
		}
	}
	if r.pointers {
		s.Pointers = fields
	} else {
		s.Tensors = fields
	}
	if r.scalars != nil {
		var b binder
		if err := r.scalars(x, &b); err != nil {
			return s, err
		}
		s.Scalars, s.OpParams = b.v, b.op
	}
	return s, p.finishLaunch(&s)
}

// finishLaunch sets the layout and batchability of a launch and checks
// that its tensor fields exist in the layout.
func (p *Plan) finishLaunch(s *Step) error {
	if s.Kernel == "" {
		return fmt.Errorf("no kernel chosen")
	}
	l, ok := p.Manifest.LayoutFor(s.Kernel)
	if !ok {
		return fmt.Errorf("kernel %s has no params layout in the ABI manifest %s", s.Kernel, p.Manifest.Source())
	}
	s.Layout = l
	for _, f := range sortedKeys(s.Tensors) {
		if fd, ok := l.Field(f); !ok || fd.Kind != abi.KindTensor {
			return fmt.Errorf("kernel %s: params layout %s has no tensor field %q", s.Kernel, l.Name, f)
		}
	}
	for _, f := range sortedKeys(s.Pointers) {
		if fd, ok := l.Field(f); !ok || fd.Kind != abi.KindPtr {
			return fmt.Errorf("kernel %s: params layout %s has no pointer field %q", s.Kernel, l.Name, f)
		}
	}
	for _, set := range []map[string]bool{keys(s.Scalars.Ints), keys(s.Scalars.Uints), keys(s.Scalars.Floats)} {
		for _, f := range sortedKeys(set) {
			if _, ok := l.Field(f); !ok {
				return fmt.Errorf("kernel %s: params layout %s has no field %q", s.Kernel, l.Name, f)
			}
		}
	}
	_, s.Batchable = p.Manifest.UberkernelID(s.Kernel)
	s.ShireMask, s.MaskNote = launchMask(s.Kernel, p.ShireMask, p.ForceShireMask)
	if p.Uberkernel && s.Batchable && s.MaskNote == "" {
		// The step runs inside the uberkernel, whose mask is its segment's.
		s.ShireMask, s.MaskNote = launchMask(Uberkernel, p.ShireMask, p.ForceShireMask)
	}
	return nil
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// sortedKeys returns a map's keys in order, so errors name the same field
// every run.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BuildError is a node the ABI manifest cannot express (a kernel without a
// params layout, an enum value it lacks): the manifest is bad input.
type BuildError struct {
	Node string
	Err  error
}

func (e *BuildError) Error() string { return fmt.Sprintf("node %s: %v", e.Node, e.Err) }
func (e *BuildError) Unwrap() error { return e.Err }

// InputError marks BuildError as bad input (exit 2).
func (e *BuildError) InputError() {}

package plan

// NodeExplain is what `et run-op --explain` shows for one graph node: how
// ggml-et would handle it and why.
type NodeExplain struct {
	// Node is the node's name and Op its op (mul_mat, rms_norm ...).
	Node string
	Op   string
	// Step is the index of the plan step that computes the node.
	Step int
	// Kind is how that step runs (view, noop, launch, fallback).
	Kind StepKind
	// Supported and Reasons are the node's own supports_op verdict.
	Supported bool
	Reasons   []Reason
	// Fusion names the fusion the node is part of ("" if none); FusedWith
	// is the other node of the pair.
	Fusion    string
	FusedWith string
	// FusionMissed lists why a fusion starting at this node was not applied.
	FusionMissed []string
	// Kernel, Layout and ParamsBytes describe the launch ("" and 0 when
	// nothing is launched).
	Kernel      string
	Layout      string
	ParamsBytes int
	// Batchable is true when the kernel can go into an uberkernel segment;
	// UberkernelID is its id in the manifest (0 when not batchable).
	Batchable    bool
	UberkernelID uint16
	// Note says why a noop step launches nothing.
	Note string
	// ShireMask is the launch's compute shire mask; MaskNote says why the
	// plan's mask was refused for this kernel.
	ShireMask uint32
	MaskNote  string
	// InPlace is true when the node writes its result into its first
	// source (ggml's *_inplace ops, set_rows, set): the launch has
	// dst.data == src0.data.
	InPlace bool
}

// Explain returns one row per graph node, in node order.
func (p *Plan) Explain() []NodeExplain {
	g := p.Graph
	rows := make([]NodeExplain, len(g.Nodes))
	for i, n := range g.Nodes {
		rows[i] = NodeExplain{Node: n.Name, Op: string(n.Op), Step: -1, InPlace: n.InPlace}
		if i < len(p.Verdicts) {
			rows[i].Supported = p.Verdicts[i].Supported
			rows[i].Reasons = p.Verdicts[i].Reasons
		}
	}
	for si := range p.Steps {
		s := &p.Steps[si]
		for k, ni := range s.Nodes {
			r := &rows[ni]
			r.Step = si
			r.Kind = s.Kind
			r.Kernel = s.Kernel
			r.Note = s.Note
			if s.Layout != nil {
				r.Layout = s.Layout.Name
				r.ParamsBytes = s.Layout.Size
			}
			if s.Kind == StepLaunch {
				r.Batchable = s.Batchable
				r.UberkernelID, _ = p.Manifest.UberkernelID(s.Kernel)
				r.ShireMask, r.MaskNote = s.ShireMask, s.MaskNote
			}
			if s.Fusion != "" {
				r.Fusion = s.Fusion
				r.FusedWith = g.Nodes[s.Nodes[1-k]].Name
			}
			if k == 0 {
				r.FusionMissed = s.FusionMissed
				if len(p.Verdicts) <= ni {
					r.Supported, r.Reasons = s.Verdict.Supported, s.Verdict.Reasons
				}
			}
		}
	}
	return rows
}

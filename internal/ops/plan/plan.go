package plan

import (
	"fmt"
	"slices"

	"github.com/ainekko/et/internal/ops/abi"
)

// StepKind says how a step is executed.
type StepKind uint8

// The step kinds.
const (
	// StepView is a view op (view, reshape, permute, transpose): ggml-et
	// skips it, nothing is launched.
	StepView StepKind = iota
	// StepNoop is a node ggml-et accepts but launches nothing for (a CPY
	// of 0 elements).
	StepNoop
	// StepLaunch is a kernel launch on the device.
	StepLaunch
	// StepFallback is a node ggml-et does not support: like ggml's CPU
	// fallback it is computed on the host with the reference math.
	StepFallback
)

func (k StepKind) String() string {
	switch k {
	case StepView:
		return "view"
	case StepNoop:
		return "noop"
	case StepLaunch:
		return "launch"
	case StepFallback:
		return "fallback"
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Verdict is the supports_op answer for one node.
type Verdict struct {
	Supported bool
	// Reasons names every failed condition (its text, e.g. "ne0 % 16 !=
	// 0 (ne0 = 100)", with a code and values).
	Reasons []Reason
}

// Step is one unit of execution: a launch (possibly of a fused pair of
// nodes), a fallback, a view or a no-op.
type Step struct {
	// Nodes are the graph nodes this step computes, in order: one, or two
	// for a fusion (the second is the node whose result the launch writes).
	Nodes []int
	Kind  StepKind
	// Verdict is the support check of the first node.
	Verdict Verdict
	// Fusion names the fusion applied ("rms_norm+mul", "mul_mat+add"), or "".
	Fusion string
	// Kernel is the kernel ELF name (without .elf) for a launch.
	Kernel string
	// Layout is the kernel's params struct.
	Layout *abi.Layout
	// Tensors maps each tensor field of Layout to the value index whose
	// tensor it carries. Optional fields that are absent are not in the map
	// (they encode as zero blocks).
	Tensors map[string]int
	// Pointers maps each raw device-pointer field of Layout (the RWKV
	// kernels take float* k, v, ..., dst instead of tensor copies) to the
	// value index whose data it points at (encoded as the value's device
	// address: base address + view offset).
	Pointers map[string]int
	// DstField is the field that is the result: a tensor field (its desc
	// carries the node's ggml op and op_params, as ggml copies the whole
	// dst tensor), or a pointer field for a kernel that takes pointers.
	DstField string
	// Scalars holds the scalar fields (Ints, Uints, Floats) already
	// resolved from the node params through the manifest.
	Scalars abi.Values
	// OpParams are the result desc's op_params: ggml's op_params of the
	// node (ggml copies the whole dst tensor; only im2col and conv_2d
	// read them, every other kernel takes its trailing scalars).
	OpParams [abi.NumOpParams]int32
	// Batchable is true when the kernel can be batched into the
	// uberkernel (manifest uberkernel ids).
	Batchable bool
	// Note says why a StepNoop launches nothing.
	Note string
	// FusionMissed lists, as "<fusion>: <reason>", why a fusion whose op
	// sequence starts at this step's node was not applied.
	FusionMissed []string
	// ShireMask is the compute shire mask the launch uses: the plan's
	// (Options.ShireMask), or all 32 shires for a kernel that needs them
	// (MaskNote then says why the plan's mask was refused).
	ShireMask uint32
	MaskNote  string
}

// Out is the value index the step writes (the result of its last node),
// or -1 for a view/no-op step.
func (s *Step) Out(g *Graph) int {
	if len(s.Nodes) == 0 {
		return -1
	}
	return g.Nodes[s.Nodes[len(s.Nodes)-1]].Out
}

// Plan is the result of planning a graph.
type Plan struct {
	Graph    *Graph
	Manifest *abi.Manifest
	Steps    []Step
	// Verdicts is the supports_op verdict of every node, by node index.
	Verdicts []Verdict
	// Uberkernel is true when launches of batchable kernels are grouped
	// into uberkernel segments (GGML_ET_UBERKERNEL).
	Uberkernel bool
	// ShireMask is the compute shire mask launches use (FullShireMask
	// unless Options.ShireMask chose another).
	ShireMask uint32
	// ForceShireMask launches every kernel on ShireMask, those that need
	// all 32 shires included (Options.ForceShireMask).
	ForceShireMask bool
}

// Options control planning.
type Options struct {
	// Uberkernel batches launches like GGML_ET_UBERKERNEL=1.
	Uberkernel bool
	// ShireMask is the compute shire mask of the launches; 0 means
	// FullShireMask, the mask ggml-et launches every kernel with. Kernels
	// that need all shires keep the full mask (see NeedsAllShires). Check
	// a user's mask with CheckShireMask first.
	ShireMask uint32
	// ForceShireMask launches the kernels that need all shires on
	// ShireMask too (for a kernel build that honours partial masks; with
	// the catalog's kernels their output is wrong or the launch hangs).
	ForceShireMask bool
}

// AddrFunc gives the device address of the memory owned by value base.
type AddrFunc func(base int) uint64

// Encode builds the launch's params bytes with the device addresses of
// the graph's buffers: each tensor field is the 336-byte device
// ggml_tensor of its value (data = base address + view offset), the
// result's desc carries the node's op value, and the scalars follow at
// their offsets.
func (p *Plan) Encode(s *Step, addr AddrFunc) ([]byte, error) {
	v, err := p.Values(s, addr)
	if err != nil {
		return nil, err
	}
	return p.Manifest.Encode(s.Layout, v)
}

// Values are the field values of a launch step's params struct (what
// Encode writes): every tensor field's desc at its device address, the
// raw pointers and the scalars.
func (p *Plan) Values(s *Step, addr AddrFunc) (abi.Values, error) {
	if s.Kind != StepLaunch {
		return abi.Values{}, fmt.Errorf("step of kind %s has no params", s.Kind)
	}
	v := abi.Values{Ints: s.Scalars.Ints, Uints: s.Scalars.Uints, Floats: s.Scalars.Floats}
	g := p.Graph
	last := g.Nodes[s.Nodes[len(s.Nodes)-1]]
	for field, vi := range s.Tensors {
		val := &g.Values[vi]
		var op int32
		var opParams [abi.NumOpParams]int32
		if field == s.DstField {
			op, _ = p.Manifest.OpValue(string(last.Op))
			opParams = s.OpParams
		}
		v.SetTensor(field, abi.DescFromTensor(val.T, addr(val.Base)+val.T.Offs, op, opParams))
	}
	if len(s.Pointers) > 0 {
		u := make(map[string]uint64, len(s.Scalars.Uints)+len(s.Pointers))
		for k, x := range s.Scalars.Uints {
			u[k] = x
		}
		for field, vi := range s.Pointers {
			val := &g.Values[vi]
			u[field] = addr(val.Base) + val.T.Offs
		}
		v.Uints = u
	}
	return v, nil
}

// Segments groups the launch steps for execution: with the uberkernel on,
// each run of consecutive batchable launches is one segment (flushed when
// a non-batchable launch or a fallback comes, and at the end, as
// ggml-et's uberkernel does); otherwise every launch is its own segment.
// Each segment lists step indices.
func (p *Plan) Segments() [][]int {
	var segs [][]int
	var cur []int
	flush := func() {
		if len(cur) > 0 {
			segs = append(segs, cur)
			cur = nil
		}
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		switch s.Kind {
		case StepLaunch:
			if p.Uberkernel && s.Batchable {
				cur = append(cur, i)
				continue
			}
			flush()
			segs = append(segs, []int{i})
		case StepFallback:
			flush()
		}
	}
	flush()
	return segs
}

// Uberkernel is the kernel that runs a batched segment.
const Uberkernel = "uberkernel"

// SegmentKernel is the kernel a segment of Segments launches: the
// uberkernel for a batched segment, else its one step's kernel.
func (p *Plan) SegmentKernel(seg []int) string {
	if len(seg) > 1 || (p.Uberkernel && p.Steps[seg[0]].Batchable) {
		return Uberkernel
	}
	return p.Steps[seg[0]].Kernel
}

// Kernels lists, sorted, the kernels a run of the plan loads: every
// launched step's kernel, and the uberkernel when a segment is batched.
func (p *Plan) Kernels() []string {
	var names []string
	for _, seg := range p.Segments() {
		names = append(names, p.SegmentKernel(seg))
		for _, si := range seg {
			names = append(names, p.Steps[si].Kernel)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/plan"
)

// PlanOptions are the planner's choices for every case of a run.
type PlanOptions struct {
	// Manifest is the ABI the plans are built for (abi.Default() if nil).
	Manifest *abi.Manifest
	// Uberkernel batches launches into uberkernel segments.
	Uberkernel bool
	// ShireMask is the compute shire mask launches use (0: all 32).
	ShireMask uint32
	// ForceShireMask launches the kernels that need all 32 shires on
	// ShireMask too (plan.Options.ForceShireMask).
	ForceShireMask bool
}

func (o PlanOptions) manifest() *abi.Manifest {
	if o.Manifest == nil {
		return abi.Default()
	}
	return o.Manifest
}

// Planned is one case with its graph and its plan, planned once: what
// et ops explain and run-op --explain show is what runs. Its leaves and
// results are tensors without data (ops.NewShape: a type, a shape, no
// memory), so planning a 64 GiB case takes no more memory than planning
// a small one; a run binds the leaves to the case's data for the time it
// runs the case (bind) and then unbinds them, so running it returns the
// results and leaves the plan as it was.
type Planned struct {
	Case  *graph.Case
	Graph *plan.Graph
	Plan  *plan.Plan
}

// bind gives the plan's leaves the case's data, for one run of it: once
// the case has its share of host memory (mem.reserve: refused when over
// the run's budget, waiting while other jobs' cases hold it), its inputs are generated or read (ctx cancels
// that), and every value that holds a leaf's memory (the leaf, its views,
// the results written into it in place, all sharing its buffer) holds
// the data. unbind takes it away again. Planning reads no data, so the
// plan is the one the data would have given; a Planned runs on one job at
// a time.
func (pc *Planned) bind(ctx context.Context, mem *hostMemory) (unbind func(), err error) {
	c, g := pc.Case, pc.Graph
	release, err := mem.reserve(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	leaves, err := graph.MaterializeContext(ctx, c)
	if err != nil {
		return nil, err
	}
	data := map[int][]byte{} // leaf value → its data
	for _, ts := range c.Tensors {
		i, ok := g.Lookup(ts.Name)
		x := leaves[ts.Name]
		if !ok || x == nil {
			return nil, fmt.Errorf("%s: leaf %s: no data for it", c.File, ts.Name)
		}
		if t := g.Values[i].T; x.Type != t.Type || x.Ne != t.Ne || x.Nb != t.Nb || x.Offs != t.Offs || uint64(len(x.Buf)) != t.BufLen() {
			return nil, fmt.Errorf("%s: leaf %s: its data (%s %s, %d bytes) does not fit the plan's (%s %s, %d bytes)",
				c.File, ts.Name, x.Type, x.ShapeString(), len(x.Buf), t.Type, t.ShapeString(), t.BufLen())
		}
		data[i] = x.Buf
	}
	zero := map[*ops.Tensor][]byte{}
	for _, v := range g.Values {
		if b, ok := data[v.Base]; ok {
			if _, seen := zero[v.T]; !seen {
				zero[v.T] = v.T.Buf
			}
			v.T.Buf = b
		}
	}
	return func() {
		for t, b := range zero {
			t.Buf = b
		}
		release()
	}, nil
}

// PlanCase builds case c into a graph and plans it: the one plan of the
// case. The leaves are tensors without data (enough to plan and explain:
// planning reads no data, and nothing is generated, read or allocated);
// a run binds them to the case's data while it runs (Planned.bind).
func PlanCase(c *graph.Case, o PlanOptions) (*Planned, error) {
	g, err := BuildGraph(c)
	if err != nil {
		return nil, err
	}
	p, err := plan.Build(g, o.manifest(), plan.Options{Uberkernel: o.Uberkernel, ShireMask: o.ShireMask, ForceShireMask: o.ForceShireMask})
	if err != nil {
		return nil, fmt.Errorf("%s: plan: %w", c.File, err)
	}
	return &Planned{Case: c, Graph: g, Plan: p}, nil
}

// BuildGraph turns case c into a planner graph whose tensors have no
// data (ops.NewShape). Errors are *graph.Error with the case's file and
// line.
func BuildGraph(c *graph.Case) (*plan.Graph, error) {
	leaves := make(map[string]*ops.Tensor, len(c.Tensors))
	for _, t := range c.Tensors {
		leaves[t.Name] = ops.NewShape(t.Type, t.Ne...)
	}
	g := plan.NewGraph()
	for _, t := range c.Tensors {
		if _, err := g.AddLeaf(t.Name, leaves[t.Name]); err != nil {
			return nil, &graph.Error{File: c.File, Line: t.Line, Msg: err.Error()}
		}
	}
	for _, n := range c.Nodes {
		if _, err := g.AddNodeInPlace(n.Name, n.Op, n.Src, map[string]any(n.Params), n.Line, n.InPlace); err != nil {
			msg := err.Error()
			var ne *plan.NodeError
			if errors.As(err, &ne) {
				msg = fmt.Sprintf("node %s: %v", ne.Node, ne.Err)
			}
			return nil, &graph.Error{File: c.File, Line: n.Line, Msg: msg}
		}
	}
	if err := g.SetOutputs(c.Outputs); err != nil {
		return nil, &graph.Error{File: c.File, Msg: err.Error()}
	}
	return g, nil
}

// CaseBytes estimates the host memory a run of c needs: every leaf and
// every non-view result on the host (the expected values), the same again
// for the device's memory (the reference device lives in this process),
// and the f32 staging of quantized leaves.
func CaseBytes(c *graph.Case) uint64 {
	size := func(t ops.Type, ne []int64) uint64 {
		n := int64(1)
		for _, v := range ne[1:] {
			n *= v
		}
		return t.RowSize(ne[0]) * uint64(n)
	}
	var total, staging uint64
	for _, t := range c.Tensors {
		total += size(t.Type, t.Ne)
		if t.Type.Quantized() {
			staging = max(staging, size(ops.F32, t.Ne))
		}
	}
	for _, n := range c.Nodes {
		if info, ok := ops.Lookup(string(n.Op)); ok && info.View {
			continue
		}
		total += size(n.Type, n.Ne[:])
	}
	return 2*total + staging
}

// CheckMemory refuses, before any data is generated, a case that needs
// more host memory than is available, or than max allows when it is set
// (--max-host-memory; infile.AdmitMemory).
func CheckMemory(c *graph.Case, max uint64) error {
	budget, by := infile.MemoryBudget(max)
	return checkBudget(c, budget, by)
}

// checkBudget is CheckMemory against a budget taken earlier.
func checkBudget(c *graph.Case, budget uint64, by string) error {
	if err := infile.AdmitBudget(caseMemoryWhat, CaseBytes(c), budget, by); err != nil {
		return &graph.Error{File: c.File, Msg: err.Error()}
	}
	return nil
}

const caseMemoryWhat = "the case (inputs, results and the device copy)"

// PlanAll plans every case without its data (planning needs only types
// and shapes): the plans say which kernels a run needs and what an
// explanation shows. A case that is bad input goes to bad, with the
// others still planned; err is an error that stops everything. seed,
// when not nil, overrides every case's seed for generated inputs.
func PlanAll(cases []*graph.Case, o PlanOptions, seed *uint64) (planned []*Planned, bad []error, err error) {
	for _, c := range cases {
		if seed != nil {
			c.Seed = *seed
		}
		pc, err := PlanCase(c, o)
		if err != nil {
			if isInputError(err) {
				bad = append(bad, err)
				continue
			}
			return nil, nil, err
		}
		planned = append(planned, pc)
	}
	return planned, bad, nil
}

// Kernels lists, sorted, the kernels a run of the plans loads.
func Kernels(planned []*Planned) []string {
	var names []string
	for _, pc := range planned {
		names = append(names, pc.Plan.Kernels()...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

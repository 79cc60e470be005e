package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

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
}

func (o PlanOptions) manifest() *abi.Manifest {
	if o.Manifest == nil {
		return abi.Default()
	}
	return o.Manifest
}

// Planned is one case with its graph and its plan. It is immutable once
// built: running it returns the results and leaves the plan as it was.
type Planned struct {
	Case  *graph.Case
	Graph *plan.Graph
	Plan  *plan.Plan
}

// PlanCase builds case c into a graph and plans it. Without data the
// leaves are zero tensors of the right shape (enough to plan and explain;
// nothing is generated or read); with data the inputs are generated or
// read (after checking that the case fits in host memory), and ctx
// cancels that work.
func PlanCase(ctx context.Context, c *graph.Case, o PlanOptions, withData bool) (*Planned, error) {
	g, err := BuildGraph(ctx, c, withData)
	if err != nil {
		return nil, err
	}
	p, err := plan.Build(g, o.manifest(), plan.Options{Uberkernel: o.Uberkernel, ShireMask: o.ShireMask})
	if err != nil {
		return nil, fmt.Errorf("%s: plan: %w", c.File, err)
	}
	return &Planned{Case: c, Graph: g, Plan: p}, nil
}

// BuildGraph turns case c into a planner graph (see PlanCase for withData).
// Errors are *graph.Error with the case's file and line.
func BuildGraph(ctx context.Context, c *graph.Case, withData bool) (*plan.Graph, error) {
	var leaves map[string]*ops.Tensor
	if withData {
		if err := CheckMemory(c, MemAvailable()); err != nil {
			return nil, err
		}
		var err error
		if leaves, err = graph.MaterializeContext(ctx, c); err != nil {
			return nil, err
		}
	} else {
		leaves = make(map[string]*ops.Tensor, len(c.Tensors))
		for _, t := range c.Tensors {
			leaves[t.Name] = ops.New(t.Type, t.Ne...)
		}
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

// CheckMemory refuses, before any data is generated, a case that cannot
// fit in the memory available (avail 0 = unknown: no check).
func CheckMemory(c *graph.Case, avail uint64) error {
	need := CaseBytes(c)
	if avail > 0 && need > avail {
		return &graph.Error{File: c.File, Msg: fmt.Sprintf("case needs about %s of host memory (inputs, results and the device copy), %s is available", mib(need), mib(avail))}
	}
	return nil
}

func mib(b uint64) string {
	if b < 1<<20 {
		return strconv.FormatUint(b, 10) + " B"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
}

// MemAvailable is MemAvailable from /proc/meminfo in bytes, or 0.
func MemAvailable() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

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
		pc, err := PlanCase(context.Background(), c, o, false)
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

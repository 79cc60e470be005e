package runner

import (
	"context"
	"strings"

	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/graph/tbocases"
	"github.com/ainekko/et/internal/ops/plan"
)

// SupportVerdict is ggml-et's supports_op verdict on one case as
// test-backend-ops' support mode gives it: of the node that produces the
// case's (last) output.
type SupportVerdict struct {
	// Op and Params are test-backend-ops' op_name and op_params: a case
	// string's op and displayed parameters, or, for a case file, its
	// output node's op (upper case) and the case's name.
	Op, Params string
	Supported  bool
	// Reasons are the failed conditions of an unsupported node.
	Reasons []plan.Reason
}

// Support judges the cases s names (LoadCases) with ggml-et's
// supports_op, one case at a time, keeping only its verdict: a case is
// parsed and planned when the one before is judged (eachCase), so that
// the 19,726 cases of the whole list are never all in memory. With no
// op, case string, file or test file in s, the cases are every eval case
// of test-backend-ops at the manifest's ggml version (tbocases). A case
// that is bad input goes to bad, with the others still judged; total
// counts the cases and the files that gave none (what bad is a part of);
// err is an error that stops everything. (et ops support.)
func Support(ctx context.Context, s Sources, m *abi.Manifest) (verdicts []SupportVerdict, bad []error, total int, err error) {
	if s.Op == "" && len(s.Cases) == 0 && len(s.CaseFiles) == 0 && len(s.Files) == 0 && len(s.TestFiles) == 0 {
		all, err := tbocases.All()
		if err != nil {
			return nil, nil, 0, err
		}
		for _, tc := range all {
			s.Cases = append(s.Cases, tc.String())
		}
	}
	var planBad []error
	bad, err = eachCase(ctx, s, m, func(c *graph.Case) error {
		total++
		pc, err := PlanCase(c, PlanOptions{Manifest: m})
		if err != nil {
			if !isInputError(err) {
				return err
			}
			planBad = append(planBad, err)
			return nil
		}
		v := outputVerdict(pc)
		sv := SupportVerdict{Op: c.OpDesc, Params: c.Vars, Supported: v.Supported, Reasons: v.Reasons}
		if sv.Op == "" { // a case file: its output node's op
			sv.Op, sv.Params = strings.ToUpper(outputOp(pc)), c.Name
		}
		verdicts = append(verdicts, sv)
		return nil
	})
	if err != nil {
		return nil, nil, 0, err
	}
	total += len(bad) // the files that gave no case are a part of it
	return verdicts, append(bad, planBad...), total, nil
}

// outputNode is the node test-backend-ops' support mode judges: the one
// that produces the case's (last) output (-1: the output is a leaf).
func outputNode(pc *Planned) int {
	g := pc.Graph
	out := g.Outputs[len(g.Outputs)-1]
	return g.Values[out].Node
}

func outputOp(pc *Planned) string {
	if n := outputNode(pc); n >= 0 {
		return string(pc.Graph.Nodes[n].Op)
	}
	return "NONE"
}

// outputVerdict is the supports_op verdict of the case's output node (a
// leaf output is nothing to run: supported).
func outputVerdict(pc *Planned) plan.Verdict {
	if n := outputNode(pc); n >= 0 {
		return pc.Plan.Verdicts[n]
	}
	return plan.Verdict{Supported: true}
}

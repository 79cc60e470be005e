package testfile_test

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/ops/testfile"
	"github.com/ainekko/et/internal/runner"
)

// TestOpParamsRoundTrip: planning a test-file case encodes the node's
// op_params as the planner does for ggml-et; every word the planner
// writes equals the line's raw word (the decoder is the planner's
// inverse). Words the planner never writes (FLASH_ATTN_EXT's precision in
// [3]) are left out.
func TestOpParamsRoundTrip(t *testing.T) {
	b, err := os.ReadFile("../../../testcases/test-files/llama_layer_small.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := abi.Default()
	cs, errs := testfile.Parse("llama.txt", b, m)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	checked := 0
	for i, c := range cs {
		op, err := testfile.ParseLine(lines[i])
		if err != nil {
			t.Fatal(err)
		}
		p, err := runner.PlanCase(c, runner.PlanOptions{Manifest: m})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		out := c.Outputs[0]
		for _, s := range p.Plan.Steps {
			if s.Kind != plan.StepLaunch || p.Graph.Nodes[s.Nodes[len(s.Nodes)-1]].Name != out {
				continue
			}
			nonzero := false
			for w, v := range s.OpParams {
				if v != 0 {
					nonzero = true
				}
				if v == 0 && c.Nodes[len(c.Nodes)-1].Op == "flash_attn_ext" && w == 3 {
					continue // GGML_PREC_F32 (10) in the line; et's reference is f32 anyway
				}
				if op.OpParams[w] != v {
					t.Errorf("%s: planned op_params[%d] = %d, the line has %d", c.Name, w, v, op.OpParams[w])
				}
			}
			if nonzero {
				checked++
			}
		}
	}
	// rms_norm (eps), two ropes, flash_attn_ext, swiglu, soft_max, silu.
	if checked < 7 {
		t.Errorf("only %d launches with op_params compared", checked)
	}
}

// TestAsTestBackendOpsReadsIt: the real test-backend-ops read the same
// files (testdata/README.md); each line's op name and displayed params are
// exactly what et shows and filters on, and et's support verdict is
// ggml-et's.
func TestAsTestBackendOpsReadsIt(t *testing.T) {
	for file, csvFile := range map[string]string{
		"../../../testcases/test-files/llama_layer_small.txt": "testdata/llama_layer_small.support_et0.csv",
		"testdata/mixed.txt": "testdata/mixed.support_et0.csv",
	} {
		t.Run(file, func(t *testing.T) { checkAgainstTBO(t, file, csvFile) })
	}
}

func checkAgainstTBO(t *testing.T, file, csvFile string) {
	f, err := os.Open(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows = rows[1:] // header
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := abi.Default()
	cs, errs := testfile.Parse(file, b, m)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(rows) != len(cs) {
		t.Fatalf("%d rows from test-backend-ops, %d cases", len(rows), len(cs))
	}
	nsup := 0
	for i, c := range cs {
		opName, vars, supported := rows[i][1], rows[i][2], rows[i][4] == "1"
		if supported {
			nsup++
		}
		if c.OpDesc != opName || c.Vars != vars {
			t.Errorf("%s:\n got %s(%s)\nwant %s(%s)", c.Name, c.OpDesc, c.Vars, opName, vars)
		}
		p, err := runner.PlanCase(c, runner.PlanOptions{Manifest: m})
		if err != nil {
			t.Fatal(err)
		}
		// The op node is the case's last node that is not a view (a
		// reshape may follow it).
		opNode := ""
		for _, n := range c.Nodes {
			if info, _ := ops.Lookup(string(n.Op)); !info.View {
				opNode = n.Name
			}
		}
		found := false
		for _, s := range p.Plan.Steps {
			for _, ni := range s.Nodes {
				if p.Graph.Nodes[ni].Name != opNode {
					continue
				}
				found = true
				if s.Verdict.Supported != supported {
					t.Errorf("%s: et says supported=%v, ggml-et %v (%v)", c.Name, s.Verdict.Supported, supported, s.Verdict.Reasons)
				}
			}
		}
		if !found {
			t.Errorf("%s: no plan step computes node %s", c.Name, opNode)
		}
	}
	t.Logf("%d lines, %d supported by ggml-et", len(cs), nsup)
}

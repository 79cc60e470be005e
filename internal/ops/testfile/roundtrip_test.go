package testfile_test

import (
	"context"
	"os"
	"strings"
	"testing"

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
		p, err := runner.PlanCase(context.Background(), c, runner.PlanOptions{Manifest: m}, false)
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

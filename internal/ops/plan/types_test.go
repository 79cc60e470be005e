package plan

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// Every ggml type plans without a panic: a cpy from f32 into it, a cont
// and get_rows from it and a mul_mat with it as weights (each where the
// op accepts the type) get a verdict; none but the kernels' own types is
// supported by ggml-et.
func TestPlanEveryType(t *testing.T) {
	deviceTypes := map[ops.Type]bool{ops.F32: true, ops.F16: true, ops.Q8_0: true, ops.Q4_0: true}
	for _, typ := range ops.Types {
		t.Run(typ.String(), func(t *testing.T) {
			k := int64(256)
			b := newGB(t).leaf("x", ops.F32, k, 4).leaf("w", typ, k, 4).leaf("rows", ops.I32, 2).leaf("act", ops.F32, k, 2)
			b.node("c", "cont", []string{"w"}, nil)
			outs := []string{"c"}
			if !typ.Integer() {
				b.node("q", "cpy", []string{"x"}, map[string]any{"type": typ.String()})
				b.node("g", "get_rows", []string{"w", "rows"}, nil)
				b.node("mm", "mul_mat", []string{"w", "act"}, nil)
				outs = append(outs, "q", "g", "mm")
			}
			b.outputs(outs...)
			p := b.build(false)
			if len(p.Verdicts) != len(b.g.Nodes) {
				t.Fatalf("%d verdicts for %d nodes", len(p.Verdicts), len(b.g.Nodes))
			}
			if !typ.Integer() {
				v := p.Verdicts[b.nodeIndex("mm")]
				if v.Supported != deviceTypes[typ] {
					t.Errorf("mul_mat with %s weights: supported = %v, reasons %v", typ, v.Supported, v.Reasons)
				}
			}
		})
	}
}

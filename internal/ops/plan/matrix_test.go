package plan

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
)

// TestSupportMatrixCoversOps: every op of the catalog and every op
// ggml-et dispatches has a declared row, and every declared kernel is in
// the manifest's kernel map.
func TestSupportMatrixCoversOps(t *testing.T) {
	m := abi.Default()
	known := map[string]bool{}
	for _, k := range m.Kernels() {
		known[k] = true
	}
	for i := range ops.Catalog {
		// An op ggml-et does not dispatch has nothing to declare.
		if _, ok := opDocs[ops.Catalog[i].Name]; !ok && (ggmlETOps[ops.Catalog[i].Name] || ops.Catalog[i].View) {
			t.Errorf("catalog op %s has no opDocs row in matrix.go", ops.Catalog[i].Name)
		}
	}
	for op := range ggmlETOps {
		if _, ok := ops.Lookup(string(op)); !ok {
			t.Errorf("ggml-et op %s is not in the catalog", op)
		}
		d, ok := opDocs[op]
		if !ok {
			t.Errorf("ggml-et op %s has no opDocs row", op)
			continue
		}
		if len(d.kernels) == 0 || d.types == "" || d.constraints == "" {
			t.Errorf("ggml-et op %s: row lacks kernels, types or constraints: %+v", op, d)
		}
	}
	for op, d := range opDocs {
		if _, ok := ops.Lookup(string(op)); !ok {
			t.Errorf("opDocs has a row for %s, which is not in the catalog", op)
		}
		for _, k := range d.kernels {
			if !known[k] {
				t.Errorf("op %s: kernel %s is not in the manifest's kernel map", op, k)
			}
		}
	}
	for _, f := range fusions {
		d, ok := fusionDocs[f.name]
		if !ok || !known[d.kernel] {
			t.Errorf("fusion %s: no fusionDocs row or unknown kernel %q", f.name, d.kernel)
		}
	}
}

func TestSupportMatrix(t *testing.T) {
	rows := SupportMatrix(nil)
	if len(rows) != len(ops.Catalog) {
		t.Fatalf("%d rows, want one per catalog op (%d)", len(rows), len(ops.Catalog))
	}
	byOp := map[ops.Op]OpRow{}
	for i, r := range rows {
		if r.Op != ops.Catalog[i].Name {
			t.Errorf("row %d is %s, want catalog order (%s)", i, r.Op, ops.Catalog[i].Name)
		}
		byOp[r.Op] = r
	}
	tests := []struct {
		op         ops.Op
		ggml       string
		uberkernel string
		kernels    int
		view       bool
	}{
		{ops.OpMulMat, "MUL_MAT", "partly", 7, false}, // mul_mat_Q4_0_matrix_engine is not batchable
		{ops.OpRMSNorm, "RMS_NORM", "yes", 1, false},
		{ops.OpUnary, "UNARY", "no", 1, false},
		{ops.OpMean, "MEAN", "no", 1, false},
		{ops.OpMulMatID, "MUL_MAT_ID", "partly", 3, false},
		{ops.OpCont, "CONT", "partly", 2, false}, // cont_f16 only
		{ops.OpRepeat, "REPEAT", "partly", 2, false},
		{ops.OpFlashAttnExt, "FLASH_ATTN_EXT", "yes", 2, false},
		{ops.OpConv2D, "CONV_2D", "no", 1, false},
		{ops.OpView, "VIEW", "-", 0, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.op), func(t *testing.T) {
			r := byOp[tt.op]
			if r.GGML != tt.ggml || r.Uberkernel != tt.uberkernel || len(r.Kernels) != tt.kernels || r.View != tt.view {
				t.Errorf("got ggml %s uberkernel %s %d kernels view %v, want %s %s %d %v",
					r.GGML, r.Uberkernel, len(r.Kernels), r.View, tt.ggml, tt.uberkernel, tt.kernels, tt.view)
			}
			if !r.Implemented || !r.Modelled {
				t.Errorf("implemented %v modelled %v, want both", r.Implemented, r.Modelled)
			}
		})
	}
	q8 := byOp[ops.OpMulMat].Kernels[2]
	if q8.Name != "mul_mat_Q8_0" || q8.Layout != "mm_q8" || q8.ParamsBytes != 1344 || !q8.Batchable || q8.UberkernelID != 15 {
		t.Errorf("mul_mat_Q8_0 info = %+v", q8)
	}
}

func TestSubOpAndFusionMatrix(t *testing.T) {
	subs := SubOpMatrix()
	if len(subs) != len(ops.UnaryOps)+len(ops.GLUOps) {
		t.Fatalf("%d sub-op rows, want %d", len(subs), len(ops.UnaryOps)+len(ops.GLUOps))
	}
	for _, s := range subs {
		want := unaryAccepted[s.Name]
		if s.Op == ops.OpGLU {
			want = gluAccepted[s.Name]
		}
		if s.Supported != want {
			t.Errorf("%s %s: supported %v, want %v", s.Op, s.Name, s.Supported, want)
		}
	}
	if !slices.IsSortedFunc(subs[:len(ops.UnaryOps)], func(a, b SubOpRow) int { return cmpStr(a.Name, b.Name) }) {
		t.Error("unary sub-ops are not sorted")
	}
	fr := FusionMatrix(nil)
	if len(fr) != 2 || fr[0].Name != FusionRMSNormMul || fr[0].Kernel.Name != "rms_norm_mul_f32" || !fr[0].Kernel.Batchable ||
		fr[1].Name != FusionMulMatAdd || fr[1].Kernel.Name != "mul_mat_Q8_0" {
		t.Errorf("fusions = %+v", fr)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSupportMatrixKernelsMatchRules: over every testcase, each kernel
// the rules choose is one the matrix declares for the op (or the fused
// kernel of the fusion), so the declared lists cannot drift from the
// selectors.
func TestSupportMatrixKernelsMatchRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testcases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testcases found (%v)", err)
	}
	m := abi.Default()
	seen := map[string]bool{}
	for _, file := range files {
		c, err := graph.Load(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		g := NewGraph()
		for _, s := range c.Tensors {
			if _, err := g.AddLeaf(s.Name, ops.New(s.Type, s.Ne...)); err != nil {
				t.Fatalf("%s: leaf %s: %v", file, s.Name, err)
			}
		}
		for _, n := range c.Nodes {
			if _, err := g.AddNode(n.Name, n.Op, n.Src, map[string]any(n.Params), n.Line); err != nil {
				t.Fatalf("%s: node %s: %v", file, n.Name, err)
			}
		}
		if err := g.SetOutputs(c.Outputs); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		p, err := Build(g, m, Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, s := range p.Steps {
			if s.Kind != StepLaunch {
				continue
			}
			op := g.Nodes[s.Nodes[0]].Op
			seen[s.Kernel] = true
			if s.Fusion != "" {
				if want := fusionDocs[s.Fusion].kernel; s.Kernel != want {
					t.Errorf("%s: fusion %s launches %s, the matrix says %s", file, s.Fusion, s.Kernel, want)
				}
				continue
			}
			if !slices.Contains(opDocs[op].kernels, s.Kernel) {
				t.Errorf("%s: %s launches %s, not in the matrix's kernels %v", file, op, s.Kernel, opDocs[op].kernels)
			}
		}
	}
	if len(seen) < 20 {
		t.Errorf("the testcases launched only %d distinct kernels; the check is too weak", len(seen))
	}
}

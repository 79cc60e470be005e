package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	trace "github.com/ainekko/et/internal/profile"
)

func perfReport(rows ...Timing) *Report {
	return &Report{Schema: ReportSchema, Perf: rows}
}

// TestCompareBaseline: segments are matched by case, kernel and nodes; a
// growth beyond the threshold is a regression (0% on exact cycles), the
// same count is not, and segments on one side only are new or gone.
func TestCompareBaseline(t *testing.T) {
	base := perfReport(
		Timing{Case: "c", Kernel: "k1", Nodes: []string{"a"}, MedCycles: 1000},
		Timing{Case: "c", Kernel: "k2", Nodes: []string{"b"}, MedCycles: 2000},
		Timing{Case: "c", Kernel: "old", Nodes: []string{"x"}, MedCycles: 5},
	)
	cur := perfReport(
		Timing{Case: "c", Kernel: "k1", Nodes: []string{"a"}, MedCycles: 1000},
		Timing{Case: "c", Kernel: "k2", Nodes: []string{"b"}, MedCycles: 2001},
		Timing{Case: "c", Kernel: "k3", Nodes: []string{"d"}, MedCycles: 7},
	)
	bl := CompareBaseline(base, cur, "old.json", 0)
	want := map[string]trace.Verdict{"k1": trace.VerdictSame, "k2": trace.VerdictSlower, "k3": trace.VerdictNew, "old": trace.VerdictGone}
	if len(bl.Rows) != 4 || bl.Regressions != 1 {
		t.Fatalf("%+v", bl)
	}
	for _, r := range bl.Rows {
		if r.Verdict != want[r.Kernel] {
			t.Errorf("%s: %s (%s), want %s", r.Kernel, r.Verdict, r.Reason, want[r.Kernel])
		}
	}
	if r := bl.Rows[1]; r.ChangePct == nil || *r.ChangePct < 0.0499 || *r.ChangePct > 0.0501 || r.BaseCycles != 2000 || r.NewCycles != 2001 {
		t.Errorf("k2 row %+v, want +0.05%%", r)
	}
	// 0.05% more passes a 1% gate; faster is never a regression.
	if bl := CompareBaseline(base, cur, "old.json", 1); bl.Regressions != 0 {
		t.Errorf("1%% gate: %+v", bl)
	}
	if bl := CompareBaseline(cur, base, "new.json", 0); bl.Regressions != 0 || bl.Rows[1].Verdict != trace.VerdictFaster {
		t.Errorf("reversed: %+v", bl)
	}
	// Without cycles on one side nothing is judged.
	base.Perf[0].MedCycles = 0
	if bl := CompareBaseline(base, cur, "old.json", 0); bl.Rows[0].Verdict != trace.VerdictNew || !strings.Contains(bl.Rows[0].Reason, "no device cycles") {
		t.Errorf("no base cycles: %+v", bl.Rows[0])
	}
	r := Report{Schema: ReportSchema, Baseline: CompareBaseline(base, cur, "old.json", 0)}
	if !r.Failed() {
		t.Error("a regression does not fail the report")
	}
}

// TestReadBaseline: a report without perf rows, another schema or not
// JSON is refused with the file named.
func TestReadBaseline(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"notjson.json": "{",
		"schema.json":  `{"schema":"et.other/v1"}`,
		"noperf.json":  `{"schema":"et.run-op/v1","results":[]}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadBaseline(context.Background(), p)
		var be *BaselineError
		if err == nil || !strings.Contains(err.Error(), p) || !isInputError(err) {
			t.Errorf("%s: %v (%T %v)", name, err, err, be)
		}
	}
	if _, err := ReadBaseline(context.Background(), filepath.Join(dir, "missing.json")); err == nil || !isInputError(err) {
		t.Errorf("missing file: %v", err)
	}
}

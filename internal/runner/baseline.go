package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ainekko/et/internal/infile"
	trace "github.com/ainekko/et/internal/profile"
)

// Baseline is a run compared with an earlier one (et run-op --perf
// --baseline OLD.json, or --baseline-kernels DIR): per timed launch
// segment, the device cycles before and after and the change, judged as
// et profile diff judges a kernel (profile.Compare) with the threshold
// --max-regression. Regressions counts the segments whose cycles grew by
// more than it: the run then fails (exit 1).
type Baseline struct {
	// From is the baseline: the file, or "kernels DIR".
	From             string        `json:"from"`
	MaxRegressionPct float64       `json:"max_regression_pct"`
	Rows             []BaselineRow `json:"rows"`
	Regressions      int           `json:"regressions"`
}

// BaselineRow is one launch segment of a case against its baseline.
type BaselineRow struct {
	Case   string   `json:"case"`
	Kernel string   `json:"kernel"`
	Nodes  []string `json:"nodes"`
	// BaseCycles and NewCycles are the median exec cycles (0: none in
	// that run); ChangePct is the change in percent, absent when a side
	// has none.
	BaseCycles uint64   `json:"base_cycles"`
	NewCycles  uint64   `json:"new_cycles"`
	ChangePct  *float64 `json:"change_pct,omitempty"`
	// Verdict is same, faster, slower (a regression beyond
	// max_regression_pct), new (not in the baseline, or no cycles there)
	// or gone (only in the baseline).
	Verdict trace.Verdict `json:"verdict"`
	Reason  string        `json:"reason"`
}

// BaselineError is a baseline file et cannot use (exit 2).
type BaselineError struct{ File, Msg string }

func (e *BaselineError) Error() string { return "--baseline " + e.File + ": " + e.Msg }

// InputError marks it as bad input.
func (*BaselineError) InputError() {}

// ReadBaseline reads an earlier run's report (et run-op --perf -o json).
func ReadBaseline(ctx context.Context, file string) (*Report, error) {
	b, err := infile.ReadFile(ctx, file, infile.MaxText)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, infile.Errorf("--baseline %s: cannot read: %s", file, infile.ErrText(err))
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		msg := "not JSON: " + err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("not JSON at byte %d: %v", se.Offset, err)
		}
		return nil, &BaselineError{file, msg + " (want the -o json report of et run-op --perf)"}
	}
	if r.Schema != ReportSchema {
		return nil, &BaselineError{file, fmt.Sprintf("schema %q, want %q (the -o json report of et run-op --perf)", r.Schema, ReportSchema)}
	}
	if len(r.Perf) == 0 {
		return nil, &BaselineError{file, "no perf rows: the baseline run needs --perf"}
	}
	return &r, nil
}

// CompareBaseline compares the timed launch segments of cur with those of
// base, matched by case, kernel and nodes (in order when a case repeats):
// a segment whose median cycles grew by more than maxPct percent is a
// regression. Rows follow cur's order, then the segments only in base.
func CompareBaseline(base, cur *Report, from string, maxPct float64) *Baseline {
	out := &Baseline{From: from, MaxRegressionPct: maxPct, Rows: []BaselineRow{}}
	key := func(t *Timing) string { return t.Case + "\x00" + t.Kernel + "\x00" + strings.Join(t.Nodes, ",") }
	byKey := map[string][]*Timing{}
	for i := range base.Perf {
		k := key(&base.Perf[i])
		byKey[k] = append(byKey[k], &base.Perf[i])
	}
	co := trace.CompareOptions{Threshold: maxPct / 100, Alpha: trace.DefaultCompareOptions().Alpha}
	add := func(b, n *Timing) {
		t := n
		if t == nil {
			t = b
		}
		row := BaselineRow{Case: t.Case, Kernel: t.Kernel, Nodes: t.Nodes}
		var bs, ns []float64
		if b != nil && b.MedCycles > 0 {
			row.BaseCycles, bs = b.MedCycles, []float64{float64(b.MedCycles)}
		}
		if n != nil && n.MedCycles > 0 {
			row.NewCycles, ns = n.MedCycles, []float64{float64(n.MedCycles)}
		}
		c := trace.Compare(bs, ns, co)
		row.Verdict, row.Reason = c.Verdict, c.Reason
		if !math.IsNaN(c.Change) && !math.IsInf(c.Change, 0) {
			v := 100 * c.Change
			row.ChangePct = &v
		}
		switch {
		case b != nil && n != nil && bs == nil:
			row.Reason = "no device cycles in the baseline"
		case b != nil && n != nil && ns == nil:
			row.Reason = "no device cycles in this run"
		case c.Verdict == trace.VerdictSlower:
			row.Reason = fmt.Sprintf("more than %g%% more cycles", maxPct)
			out.Regressions++
		}
		out.Rows = append(out.Rows, row)
	}
	for i := range cur.Perf {
		n := &cur.Perf[i]
		k := key(n)
		var b *Timing
		if l := byKey[k]; len(l) > 0 {
			b, byKey[k] = l[0], l[1:]
		}
		add(b, n)
	}
	for i := range base.Perf {
		b := &base.Perf[i]
		k := key(b)
		if l := byKey[k]; len(l) > 0 && l[0] == b {
			byKey[k] = l[1:]
			add(b, nil)
		}
	}
	return out
}

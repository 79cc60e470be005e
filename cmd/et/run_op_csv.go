package main

import (
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/runner"
)

// runOpCSV is et run-op's raw CSV form, nine tables, always written (a
// table without rows keeps its header): the run (one row: backend,
// device, what computed the outputs, the outputs per status), one row per output (results), one
// per failed support condition of a fallback output (reasons), one
// per timed launch with --perf (perf: median_ns, min_ns, max_ns, flops,
// bytes, flops_per_s, bytes_per_s, the timing columns test-backend-ops'
// CSV lacks, and the device cycles with the efficiency), with --perf one
// per launch of the judged runs (launches) and one with the split of the
// run's wall time (phases), with --baseline one per compared launch
// segment (baseline), one per hart context of a kernel fault (faults) and one per
// field of a launch whose params decoded differently from the plan
// (abi_mismatches).
func runOpCSV(d runner.Report) []csvTable {
	type run struct {
		Backend    string        `json:"backend"`
		Device     string        `json:"device"`
		Numerics   string        `json:"numerics"`
		ABIChecked int           `json:"abi_checked"`
		Counts     runner.Counts `json:"counts"`
	}
	type fault struct {
		Case string `json:"case"`
		Step string `json:"step"`
		csvFault
	}
	type mismatch struct {
		Case   string `json:"case"`
		Step   string `json:"step"`
		Kernel string `json:"kernel"`
		abi.FieldDiff
	}
	type reason struct {
		Case   string `json:"case"`
		Output string `json:"output"`
		plan.Reason
	}
	faults, mismatches, reasons, phases := []fault{}, []mismatch{}, []reason{}, []runner.Phases{}
	if d.Phases != nil {
		phases = append(phases, *d.Phases)
	}
	baseline := []runner.BaselineRow{}
	if d.Baseline != nil {
		baseline = d.Baseline.Rows
	}
	launches := d.Launches
	if launches == nil {
		launches = []runner.Launch{}
	}
	for _, r := range d.Results {
		for _, x := range r.Reasons {
			reasons = append(reasons, reason{r.Case, r.Output, x})
		}
	}
	for _, fl := range d.Faults {
		for _, x := range csvFaults(fl.Errors) {
			faults = append(faults, fault{fl.Case, fl.Step, x})
		}
	}
	for _, m := range d.ABIMismatches {
		for _, x := range m.Fields {
			mismatches = append(mismatches, mismatch{m.Case, m.Step, m.Kernel, x})
		}
	}
	return []csvTable{
		{Name: "run", Rows: []run{{d.Backend, d.Device, d.Numerics, d.ABIChecked, d.Count()}}},
		{Name: "results", Rows: d.Results},
		{Name: "reasons", Rows: reasons},
		{Name: "perf", Rows: d.Perf},
		{Name: "launches", Rows: launches},
		{Name: "phases", Rows: phases},
		{Name: "baseline", Rows: baseline},
		{Name: "faults", Rows: faults},
		{Name: "abi_mismatches", Rows: mismatches},
	}
}

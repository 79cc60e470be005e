package main

import "github.com/ainekko/et/internal/runner"

// runOpCSV is et run-op's raw CSV form: one row per output (results), one
// per timed launch with --perf (perf: median_ns, min_ns, max_ns, flops,
// bytes, flops_per_s, bytes_per_s, the timing columns test-backend-ops'
// CSV lacks) and one per hart context of a kernel fault (faults). The
// three tables are always written, perf and faults without rows when
// there are none.
func runOpCSV(d runner.Report) []csvTable {
	type fault struct {
		Case string `json:"case"`
		Step string `json:"step"`
		csvFault
	}
	faults := []fault{}
	for _, fl := range d.Faults {
		for _, x := range csvFaults(fl.Errors) {
			faults = append(faults, fault{fl.Case, fl.Step, x})
		}
	}
	return []csvTable{{Name: "results", Rows: d.Results}, {Name: "perf", Rows: d.Perf}, {Name: "faults", Rows: faults}}
}

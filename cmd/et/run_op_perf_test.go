package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

// TestRunOpPerfTables: with device cycles the perf table shows them, the
// device time and the share of the peak (with its bound), says which
// figure is which, and flags a memory share above 100%; the launches
// table has a row per launch and the phases line under it.
func TestRunOpPerfTables(t *testing.T) {
	d := runner.Report{
		Perf: []runner.Timing{
			{Case: "c", Kernel: "k", Nodes: []string{"a"}, Runs: 2, MedNS: 2e6, MinNS: 1e6, MaxNS: 3e6, Clock: "device", MedCycles: 3089, MedDeviceNS: 3089, FreqMHz: 1000,
				Efficiency: &runner.Efficiency{PeakPct: 3.14159, Bound: "memory", BytesPct: 3.14159}},
			{Case: "c", Kernel: "m", Nodes: []string{"b"}, Runs: 2, Clock: "device", MedCycles: 10, FreqMHz: 1000,
				Efficiency: &runner.Efficiency{PeakPct: 332, Bound: "memory", BytesPct: 332}},
		},
		Launches: []runner.Launch{{Case: "c", Nodes: []string{"a"}, Kernel: "k", WallNS: 5e8, ExecCycles: 3077, DeviceNS: 3077, Shires: 32}},
		Phases:   &runner.Phases{BootNS: 1e9, LaunchNS: 5e8, OtherNS: 5e8, TotalNS: 2e9},
	}
	tabs := runOpPerfTables(d)
	if len(tabs) != 2 {
		t.Fatalf("%d tables", len(tabs))
	}
	pt := tabs[0]
	row := pt.Rows[0]
	cell := func(h string) string { return row[slices.Index(pt.Headers, h)] }
	if cell("cycles") != "3089" || cell("device time") != "3.1 µs" || cell("% of peak") != "3.1% m" || cell("wall median") != "2.00 ms" {
		t.Errorf("perf row %q", row)
	}
	notes := strings.Join(pt.Notes, "\n")
	if !strings.Contains(pt.Title, "wall") || !strings.Contains(pt.Title, "cycles") || !strings.Contains(notes, "1000 MHz") || !strings.Contains(notes, "above 100%") {
		t.Errorf("title %q notes %q", pt.Title, notes)
	}
	lt := tabs[1]
	if len(lt.Rows) != 1 || lt.Rows[0][4] != "3077" || lt.Rows[0][6] != "500.00 ms" {
		t.Errorf("launch rows %q", lt.Rows)
	}
	if last := lt.Notes[len(lt.Notes)-1]; !strings.HasPrefix(last, "wall time 2.000 s: boot 1.000 s") || !strings.Contains(last, "other 500.00 ms") {
		t.Errorf("phases line %q", last)
	}
}

// TestShardMergePerfLaunches: merging --perf shards keeps every launch
// row in the unsharded order and sums the shards' phases.
func TestShardMergePerfLaunches(t *testing.T) {
	dir := shardCaseDir(t, false)
	perf := []string{"--perf", "--perf-runs", "1", "--perf-warmup", "0", "--perf-time", "0"}
	_, one, _ := runCLI(t, nil, append([]string{"run-op", "-f", dir, "-o", "json"}, perf...)...)
	files, _ := runShards(t, 2, append([]string{"run-op", "-f", dir}, perf...)...)
	_, merged, errOut := runCLI(t, nil, append([]string{"run-op", "merge", "-o", "json"}, files...)...)
	a, b := reportOf(t, one), reportOf(t, merged)
	if len(a.Launches) == 0 || len(a.Launches) != len(b.Launches) {
		t.Fatalf("launches: unsharded %d, merged %d (%s)", len(a.Launches), len(b.Launches), errOut)
	}
	for i := range a.Launches {
		if a.Launches[i].Case != b.Launches[i].Case || a.Launches[i].Kernel != b.Launches[i].Kernel {
			t.Errorf("launch %d: %+v, merged %+v", i, a.Launches[i], b.Launches[i])
		}
	}
	var total int64
	for _, f := range files {
		b, _ := os.ReadFile(f)
		total += reportOf(t, string(b)).Phases.TotalNS
	}
	if b.Phases == nil || b.Phases.TotalNS != total {
		t.Errorf("merged phases %+v, want the shards' total %d", b.Phases, total)
	}
}

// TestHTMLRunOpPeak: -o html shows each launch's cycles and share of the
// peak in the perf table and marks a launch under 10% of the peak.
func TestHTMLRunOpPeak(t *testing.T) {
	d := runner.Report{Schema: runner.ReportSchema, Backend: "sysemu", Device: "sysemu0", Numerics: "device", Results: []runner.Result{},
		Perf: []runner.Timing{
			{Case: "c", Kernel: "slow_kernel", Nodes: []string{"a"}, Runs: 1, MedNS: 1e6, MinNS: 1e6, MaxNS: 1e6, Clock: "device", MedCycles: 5000, FreqMHz: 1000,
				Efficiency: &runner.Efficiency{PeakPct: 3, Bound: "compute", FlopsPct: 3}},
			{Case: "c", Kernel: "fast_kernel", Nodes: []string{"b"}, Runs: 1, MedNS: 1e6, MinNS: 1e6, MaxNS: 1e6, Clock: "device", MedCycles: 4000, FreqMHz: 1000,
				Efficiency: &runner.Efficiency{PeakPct: 60, Bound: "compute", FlopsPct: 60}},
		},
		Launches: []runner.Launch{{Case: "c", Nodes: []string{"a"}, Kernel: "slow_kernel", WallNS: 1e6, ExecCycles: 5000, Shires: 32}}}
	var buf strings.Builder
	if err := render(&buf, "html", styles{}, runOpDocument(d, styles{})); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, []byte(buf.String()))
	perf := page.byClass("table", "perf")
	if len(perf) != 1 || !strings.Contains(perf[0].text(), "5000") || !strings.Contains(perf[0].text(), "3.0% c") || !strings.Contains(perf[0].text(), "60.0% c") {
		t.Errorf("perf table: %v", perf)
	}
	if len(page.byClass("table", "launches")) != 1 {
		t.Error("no launches table")
	}
	low := page.byClass("p", "low")
	if len(low) != 1 || !strings.Contains(low[0].text(), "slow_kernel") {
		t.Errorf("low marks %v, want slow_kernel only", low)
	}
}

package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/runner"
)

// runOpPerfTables are run-op --perf's tables: per launch segment the
// timed runs (host wall time, and the device's cycles where its runtime
// has a profiler, with the efficiency against the peak of the shires
// launched), then every launch of the judged runs, and the split of the
// run's wall time.
func runOpPerfTables(d runner.Report) []table {
	if len(d.Perf) == 0 {
		return nil
	}
	title := "Performance (wall: host time from launch to sync; cycles: the device's execution cycles from the runtime's profiler, median)"
	if d.Perf[0].Clock == "host" {
		title = "Performance (host time: the reference device runs its kernels on this CPU)"
	}
	pt := table{Title: title, Headers: []string{"case", "kernel", "nodes", "runs", "wall median", "wall min", "wall max", "cycles", "device time", "GFLOP/s", "GB/s", "% of peak"},
		Right: []int{3, 4, 5, 6, 7, 8, 9, 10, 11},
		// At 80 columns: the spread and the derived columns go first.
		Optional: []string{"wall min", "wall max", "GB/s", "device time"}}
	for _, p := range d.Perf {
		gf := "-"
		if p.Flops > 0 {
			gf = strconv.FormatFloat(p.FlopsPerS/1e9, 'f', 2, 64)
		}
		pt.Rows = append(pt.Rows, []string{p.Case, p.Kernel, strings.Join(p.Nodes, ","), strconv.Itoa(p.Runs),
			runTime(p.MedNS), runTime(p.MinNS), runTime(p.MaxNS), cyclesCell(p.MedCycles), runTime(p.MedDeviceNS),
			gf, strconv.FormatFloat(p.BytesPerS/1e9, 'f', 2, 64), peakCell(p.Efficiency)})
	}
	if d.Perf[0].FreqMHz > 0 {
		pt.Notes = append(pt.Notes, fmt.Sprintf("device time: the cycles at the device clock (%d MHz); GFLOP/s and GB/s are per wall time", d.Perf[0].FreqMHz))
	}
	for _, p := range d.Perf {
		if e := p.Efficiency; e != nil {
			pt.Notes = append(pt.Notes, "% of peak: FLOPs per cycle against 16 per minion (one 8-lane FMA) × 32 minions × the shires launched, or bytes per cycle against the DRAM bandwidth, whichever is higher (c: compute, m: memory; docs/performance-sysemu.md)")
			break
		}
	}
	for _, p := range d.Perf {
		if e := p.Efficiency; e != nil && e.BytesPct > 100 {
			pt.Notes = append(pt.Notes, "a memory share above 100%: the device moved more bytes a cycle than its DRAM bandwidth (sys_emu has no memory timing model, and data in L2/L3 is not DRAM traffic)")
			break
		}
	}
	tables := []table{pt}
	if len(d.Launches) > 0 {
		lt := table{Title: "Launches (each launch of the judged runs)", Headers: []string{"case", "nodes", "kernel", "shires", "cycles", "device time", "wall"}, Right: []int{3, 4, 5, 6}}
		for _, l := range d.Launches {
			lt.Rows = append(lt.Rows, []string{l.Case, strings.Join(l.Nodes, ","), l.Kernel, strconv.Itoa(l.Shires), cyclesCell(l.ExecCycles), runTime(l.DeviceNS), runTime(l.WallNS)})
		}
		tables = append(tables, lt)
	}
	if ph := d.Phases; ph != nil && len(tables) > 0 {
		t := &tables[len(tables)-1]
		t.Notes = append(t.Notes, phasesLine(ph))
	}
	if d.Baseline != nil {
		tables = append(tables, baselineTable(d.Baseline))
	}
	return tables
}

// phasesLine is the split of a run's wall time, one line.
func phasesLine(ph *runner.Phases) string {
	parts := []struct {
		name string
		ns   int64
	}{{"boot", ph.BootNS}, {"inputs", ph.InputsNS}, {"uploads", ph.UploadNS}, {"launches", ph.LaunchNS}, {"perf runs", ph.PerfNS},
		{"downloads", ph.DownloadNS}, {"judging", ph.JudgeNS}, {"other", ph.OtherNS}}
	var s []string
	for _, p := range parts {
		s = append(s, p.name+" "+fmtNS(p.ns))
	}
	return "wall time " + fmtNS(ph.TotalNS) + ": " + strings.Join(s, ", ")
}

// cyclesCell is a cycle count, "-" when not measured.
func cyclesCell(c uint64) string {
	if c == 0 {
		return "-"
	}
	return fmtCycles(c)
}

// peakCell is a launch's efficiency: the larger fraction of a peak, and
// which ("12.5% c" compute, "3.1% m" memory).
func peakCell(e *runner.Efficiency) string {
	if e == nil {
		return "-"
	}
	return strconv.FormatFloat(e.PeakPct, 'f', 1, 64) + "% " + e.Bound[:1]
}

// addBaselineFlags adds run-op's regression gate flags.
func addBaselineFlags(cmd *cobra.Command, opts *runOpOptions) {
	fl := cmd.Flags()
	fl.StringVar(&opts.Baseline, "baseline", "", "with --perf, compare each launch's device cycles with an earlier run's report (`file`: et run-op --perf -o json) and fail (exit 1) when any grew by more than --max-regression")
	fl.StringVar(&opts.BaselineKernels, "baseline-kernels", "", "with --perf, first run the same cases with the kernels of `dir` (on their own device) as the baseline, then with --kernels; compared as --baseline")
	fl.Float64Var(&opts.MaxRegression, "max-regression", 5, "with --baseline, the largest growth of a launch's cycles, in `percent`, that still passes (0 on sysemu, whose cycles are exact)")
}

// checkBaseline checks the regression gate flags.
func (opts *runOpOptions) checkBaseline() error {
	if opts.Baseline == "" && opts.BaselineKernels == "" {
		return nil
	}
	switch {
	case opts.Baseline != "" && opts.BaselineKernels != "":
		return usageErrorf("--baseline and --baseline-kernels: give one baseline")
	case !opts.Perf:
		return usageErrorf("--baseline and --baseline-kernels compare --perf runs: add --perf")
	case opts.MaxRegression < 0 || math.IsNaN(opts.MaxRegression) || math.IsInf(opts.MaxRegression, 0):
		return usageErrorf("--max-regression %g: want a percentage >= 0", opts.MaxRegression)
	case opts.BaselineKernels != "" && !registry.Native(opts.Backend):
		return usageErrorf("--baseline-kernels needs a device that loads kernel ELFs (--backend sysemu or pcie)")
	}
	return nil
}

// baselineFrom names the baseline in reports.
func (opts *runOpOptions) baselineFrom() string {
	if opts.BaselineKernels != "" {
		return "kernels " + opts.BaselineKernels
	}
	return opts.Baseline
}

// baselineReport is the report the run is compared with: the --baseline
// file, or a run of the same cases with --baseline-kernels, nil without
// either.
func (opts *runOpOptions) baselineReport(ctx context.Context, f *factory, p *runner.Prepared, eo runner.ExecuteOptions) (*runner.Report, error) {
	switch {
	case opts.Baseline != "":
		return runner.ReadBaseline(ctx, opts.Baseline)
	case opts.BaselineKernels == "":
		return nil, nil
	}
	eo.Target.Kernels = opts.BaselineKernels
	eo.Profile, eo.Options.SaveOutputs, eo.Options.SaveInputs = "", "", ""
	f.logf("baseline: running the cases with the kernels of %s", opts.BaselineKernels)
	out, err := runner.Execute(ctx, p, eo)
	if err != nil {
		return nil, fmt.Errorf("--baseline-kernels %s: %w", opts.BaselineKernels, err)
	}
	return &out.Report, nil
}

// baselineTable is the comparison with a baseline: per launch segment the
// cycles before and after, the change and the verdict.
func baselineTable(bl *runner.Baseline) table {
	t := table{Title: "Device cycles against the baseline " + bl.From, Headers: []string{"case", "kernel", "nodes", "before", "after", "change", "verdict"}, Right: []int{3, 4, 5}}
	for _, r := range bl.Rows {
		change := "-"
		if r.ChangePct != nil {
			change = strconv.FormatFloat(*r.ChangePct, 'f', 2, 64) + "%"
			if *r.ChangePct > 0 {
				change = "+" + change
			}
		}
		t.Rows = append(t.Rows, []string{r.Case, r.Kernel, strings.Join(r.Nodes, ","), cyclesCell(r.BaseCycles), cyclesCell(r.NewCycles), change, string(r.Verdict)})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d launch(es) with more than %g%% more cycles than the baseline (--max-regression)", bl.Regressions, bl.MaxRegressionPct))
	return t
}

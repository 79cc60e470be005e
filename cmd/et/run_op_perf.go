package main

import (
	"fmt"
	"strconv"
	"strings"

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
		Right: []int{3, 4, 5, 6, 7, 8, 9, 10, 11}}
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
			pt.Notes = append(pt.Notes, "% of peak: FLOPs per cycle against 16 per minion (one 8-lane FMA) × 32 minions × the shires launched, or bytes per cycle against the DRAM bandwidth, whichever is higher (c: compute, m: memory; docs/performance.md)")
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

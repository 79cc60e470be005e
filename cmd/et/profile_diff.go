package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ainekko/et/internal/profile"
	"github.com/spf13/cobra"
)

// diffInput is one side of a diff: a trace path and its label.
type diffInput struct {
	Label string
	Path  string
	// KernelMap is the --base-kernel-map / --new-kernel-map flag.
	KernelMap string
}

type profileDiffOptions struct {
	IO   *ioStreams
	Base diffInput
	New  diffInput
	// Threshold is a fraction (0.05 = 5%); Alpha the rank-test level;
	// MinTime the floor below which kernels are never called slower.
	Threshold float64
	Alpha     float64
	MinTime   time.Duration
	// NoCorrection turns off the Holm-Bonferroni correction across rows.
	NoCorrection bool
	FreqMHz      uint32
	Output       string
	f            *factory
}

func newProfileDiffCmd(f *factory, runF func(context.Context, *profileDiffOptions) error) *cobra.Command {
	opts := &profileDiffOptions{IO: f.IO, f: f}
	var threshold, minTime string
	var freq uint
	cmd := &cobra.Command{
		Use:   "diff <base> <new> [--threshold 5%] [--min-time <duration>]",
		Short: "Compare two runtime traces kernel by kernel; exit 1 on a slowdown",
		Long: `Compare the device execution times of two runtime traces, per kernel and per
copy direction: launches, median and mean exec time in each, the change of
the median, and a verdict: same, faster, slower, new or gone.

A kernel is slower (or faster) only when its median changed by more than
--threshold, and, when both traces have enough launches of it for the
test to reach --alpha, a Mann-Whitney U test (as benchstat uses) finds
the difference significant, so that noise is not called a regression.
With fewer launches the threshold alone decides, and a note says so.
The p-values are corrected for the number of kernels compared
(Holm-Bonferroni), so a gate over many kernels is not tripped by chance;
--no-correction turns that off.
Kernels whose median is below --min-time in both traces are never called
slower.

Kernels are matched by name, so each trace needs its kernel map
(kernel_id.json beside it, or --base-kernel-map/--new-kernel-map): ids
change from run to run. Inputs may be labelled label=path.

Exit status is 1 when any kernel or copy direction is slower, so CI can
gate on it; 0 otherwise; 2 for unreadable input. Use -o json (schema
et.profile-diff/v1) or -o csv in scripts.`,
		Example: `  $ et profile diff base/et_runtime_trace.json new/et_runtime_trace.json
  $ et profile diff main=base.json pr=new.json --threshold 3% --min-time 2us
  $ et profile diff base.json new.json -o json > diff.json
  $ et profile diff base.json new.json -o html > diff.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output = f.Global.Output
			var err error
			baseMap, newMap := opts.Base.KernelMap, opts.New.KernelMap
			opts.Base = parseDiffInput(args[0], "base")
			opts.New = parseDiffInput(args[1], "new")
			opts.Base.KernelMap, opts.New.KernelMap = baseMap, newMap
			if opts.Base.Path == "-" && opts.New.Path == "-" {
				return usageErrorf("only one input can be stdin")
			}
			if opts.Threshold, err = parsePercent(threshold); err != nil {
				return usageErrorf("invalid --threshold %q: %v", threshold, err)
			}
			if !(opts.Alpha > 0 && opts.Alpha < 1) {
				return usageErrorf("invalid --alpha %v (want 0 < alpha < 1)", opts.Alpha)
			}
			if opts.MinTime, err = parseMinTime(minTime); err != nil {
				return usageErrorf("invalid --min-time %q: %v", minTime, err)
			}
			if freq > 1<<32-1 {
				return usageErrorf("invalid --freq-mhz %d", freq)
			}
			opts.FreqMHz = uint32(freq)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return profileDiffRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&threshold, "threshold", "5%", "smallest change of the median that counts, in `percent`")
	fl.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test")
	fl.BoolVar(&opts.NoCorrection, "no-correction", false, "do not correct the rank tests for the number of kernels compared (Holm-Bonferroni)")
	fl.StringVar(&minTime, "min-time", "0", "never call kernels slower whose median exec is below this `duration` (e.g. 1us)")
	fl.StringVar(&opts.Base.KernelMap, "base-kernel-map", "", "kernel map `file` of the base trace (default: kernel_id.json beside it)")
	fl.StringVar(&opts.New.KernelMap, "new-kernel-map", "", "kernel map `file` of the new trace (default: kernel_id.json beside it)")
	fl.UintVar(&freq, "freq-mhz", 0, "device frequency in MHz, overriding both traces'")
	return cmd
}

// parseDiffInput splits "label=path". An argument that names an existing
// file is a path even if it contains "=".
func parseDiffInput(arg, defLabel string) diffInput {
	if _, err := os.Stat(arg); err == nil || arg == "-" {
		return diffInput{Label: defLabel, Path: arg}
	}
	if i := strings.IndexByte(arg, '='); i > 0 {
		return diffInput{Label: arg[:i], Path: arg[i+1:]}
	}
	return diffInput{Label: defLabel, Path: arg}
}

// parsePercent reads "5%", "5" or "2.5%" as a fraction (0.05).
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("want a percentage such as 5%%")
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be 0 or more")
	}
	return v / 100, nil
}

// parseMinTime reads a Go duration ("1us", "1µs", "500ns", "0").
func parseMinTime(s string) (time.Duration, error) {
	if s == "0" || s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 1us or 500ns")
	}
	if d < 0 {
		return 0, fmt.Errorf("must be 0 or more")
	}
	return d, nil
}

// profileDiffTrace describes one input in the JSON document.
type profileDiffTrace struct {
	Label      string `json:"label"`
	Path       string `json:"path"`
	KernelMap  string `json:"kernel_map"`
	Events     int    `json:"events"`
	Launches   int    `json:"launches"`
	Copies     int    `json:"copies"`
	Incomplete int    `json:"incomplete"`
	Truncated  bool   `json:"truncated"`
}

type profileDiffDoc struct {
	Schema       string            `json:"schema"`
	Base         profileDiffTrace  `json:"base"`
	New          profileDiffTrace  `json:"new"`
	ThresholdPct float64           `json:"threshold_pct"`
	Alpha        float64           `json:"alpha"`
	MinTimeNS    int64             `json:"min_time_ns"`
	Unit         string            `json:"unit"`
	Rows         []profile.DiffRow `json:"rows"`
	Counts       map[string]int    `json:"counts"`
	Regression   bool              `json:"regression"`
	Notes        []string          `json:"notes"`
	Warnings     []string          `json:"warnings"`
}

func profileDiffRun(ctx context.Context, opts *profileDiffOptions) error {
	f := opts.f
	var warnings []string
	load := func(in diffInput) (*profile.Samples, profileDiffTrace, error) {
		desc := profileDiffTrace{Label: in.Label, Path: in.Path}
		km, kmWarn, _, err := kernelMapFor(ctx, in.Path, in.KernelMap)
		if err != nil {
			return nil, desc, err
		}
		warnings = append(warnings, kmWarn...)
		if km.Len() == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: no kernel map: kernels are matched by id (kernel#N), and ids change between runs", in.Label))
		} else if in.KernelMap != "" {
			desc.KernelMap = in.KernelMap
		} else {
			desc.KernelMap = "kernel_id.json"
		}
		r, closeFn, err := openTrace(ctx, in.Path, opts.IO.In)
		if err != nil {
			return nil, desc, err
		}
		defer closeFn()
		var w profile.Warnings
		name := traceName(in.Path)
		s, err := profile.CollectSamples(r, profile.Options{File: name, Warnings: &w},
			profile.JoinOptions{Kernels: km, FreqMHz: opts.FreqMHz, OverrideFreq: opts.FreqMHz != 0})
		if err != nil {
			return nil, desc, err
		}
		for _, x := range w.List() {
			warnings = append(warnings, in.Label+": "+x.String())
		}
		desc.Events, desc.Launches, desc.Copies = s.Decode.Events, s.Join.Launches, s.Join.Copies
		desc.Incomplete, desc.Truncated = s.Incomplete, s.Decode.Truncated
		return s, desc, nil
	}
	base, baseDesc, err := load(opts.Base)
	if err != nil {
		return err
	}
	nw, newDesc, err := load(opts.New)
	if err != nil {
		return err
	}
	res := profile.Diff(base, nw, profile.DiffOptions{
		Threshold: opts.Threshold, Alpha: opts.Alpha, MinTimeNS: float64(opts.MinTime.Nanoseconds()),
		NoCorrection: opts.NoCorrection,
	})
	for _, w := range warnings {
		f.warnf("%s", w)
	}

	doc := profileDiffDoc{
		Schema: "et.profile-diff/v1", Base: baseDesc, New: newDesc,
		ThresholdPct: opts.Threshold * 100, Alpha: opts.Alpha, MinTimeNS: opts.MinTime.Nanoseconds(),
		Unit: string(res.Unit), Rows: res.Rows, Regression: res.Regression(),
		Counts: map[string]int{}, Notes: res.Notes, Warnings: warnings,
	}
	for _, v := range []profile.Verdict{profile.VerdictSame, profile.VerdictFaster, profile.VerdictSlower, profile.VerdictNew, profile.VerdictGone} {
		doc.Counts[string(v)] = res.Counts[v]
	}
	if doc.Rows == nil {
		doc.Rows = []profile.DiffRow{}
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	if err := f.render(document{Data: doc, Tables: diffTables(opts, res, f.styles())}); err != nil {
		return err
	}
	if res.Regression() {
		return errSilent
	}
	return nil
}

// diffTables renders the rows: one table for kernels, one for copies.
func diffTables(opts *profileDiffOptions, res *profile.DiffResult, st styles) []table {
	fmtT := func(v float64, ns *float64) string {
		if res.Unit == profile.UnitNS && ns != nil {
			return fmtNS(int64(*ns))
		}
		return diffFmtCycles(v)
	}
	sideCells := func(s *profile.DiffSide) []string {
		if s == nil {
			return []string{"-", "-", "-"}
		}
		return []string{strconv.Itoa(s.Count), fmtT(s.MedianExecCycles, s.MedianExecNS), fmtT(s.MeanExecCycles, s.MeanExecNS)}
	}
	b, n := opts.Base.Label, opts.New.Label
	mk := func(title, what string) table {
		return table{
			Title: title,
			Headers: []string{what, b + " n", b + " median", b + " mean", n + " n", n + " median", n + " mean",
				"change", "p", "verdict"},
			Right: []int{1, 2, 3, 4, 5, 6, 7, 8},
			// At 80 columns the means go first: the verdict is on medians.
			Optional: []string{b + " mean", n + " mean"},
		}
	}
	kt, ct := mk("Kernels", "kernel"), mk("Copies", "direction")
	for _, r := range res.Rows {
		row := []string{r.Name}
		row = append(row, sideCells(r.Base)...)
		row = append(row, sideCells(r.New)...)
		change, p := "-", "-"
		if r.ChangePct != nil {
			change = fmt.Sprintf("%+.1f%%", *r.ChangePct)
		} else if r.Base != nil && r.New != nil {
			change = "+inf"
		}
		if r.PValue != nil {
			p = fmt.Sprintf("%.3f", *r.PValue)
		}
		row = append(row, change, p, st.Status(string(r.Verdict)))
		if r.Kind == "copy" {
			ct.Rows = append(ct.Rows, row)
		} else {
			kt.Rows = append(kt.Rows, row)
		}
	}
	notes := []string{
		fmt.Sprintf("%s: %s   %s: %s", b, opts.Base.Path, n, opts.New.Path),
		fmt.Sprintf("slower/faster: median changed by more than %s and Mann-Whitney U p < %g; p \"-\": too few launches for the test, threshold alone",
			strconv.FormatFloat(opts.Threshold*100, 'f', -1, 64)+"%", opts.Alpha),
	}
	if opts.MinTime > 0 {
		notes = append(notes, fmt.Sprintf("kernels with a median below %s in both traces are never called slower", opts.MinTime))
	}
	notes = append(notes, res.Notes...)
	var counts []string
	for _, v := range []profile.Verdict{profile.VerdictSlower, profile.VerdictFaster, profile.VerdictSame, profile.VerdictNew, profile.VerdictGone} {
		if c := res.Counts[v]; c > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", c, v))
		}
	}
	if len(counts) == 0 {
		counts = []string{"nothing to compare"}
	}
	notes = append(notes, strings.Join(counts, ", "))
	tables := []table{kt}
	if len(ct.Rows) > 0 {
		tables = append(tables, ct)
	}
	tables[len(tables)-1].Notes = notes
	return tables
}

func diffFmtCycles(c float64) string {
	switch {
	case c >= 1e9:
		return fmt.Sprintf("%.3gG cyc", c/1e9)
	case c >= 1e6:
		return fmt.Sprintf("%.3gM cyc", c/1e6)
	case c >= 1e3:
		return fmt.Sprintf("%.3gk cyc", c/1e3)
	}
	return fmt.Sprintf("%.0f cyc", c)
}

func init() {
	profileSubcommands = append(profileSubcommands, func(f *factory) *cobra.Command { return newProfileDiffCmd(f, nil) })
}

// profileDiffCSV is the raw CSV form: the comparison's settings and
// inputs (one row), and one row per kernel or copy direction (sides
// flattened: base_median_exec_ns, new_count, ...).
func profileDiffCSV(d profileDiffDoc) []csvTable {
	type diff struct {
		Base         profileDiffTrace `json:"base"`
		New          profileDiffTrace `json:"new"`
		ThresholdPct float64          `json:"threshold_pct"`
		Alpha        float64          `json:"alpha"`
		MinTimeNS    int64            `json:"min_time_ns"`
		Unit         string           `json:"unit"`
		Regression   bool             `json:"regression"`
	}
	return []csvTable{
		{Name: "diff", Rows: []diff{{d.Base, d.New, d.ThresholdPct, d.Alpha, d.MinTimeNS, d.Unit, d.Regression}}},
		{Name: "rows", Rows: d.Rows},
	}
}

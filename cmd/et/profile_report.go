package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/profile"
	"github.com/spf13/cobra"
)

type profileReportOptions struct {
	IO        *ioStreams
	Output    string
	Traces    []string // label=path or path; "-" is stdin
	Views     []string
	Top       int
	Device    int
	KernelMap string
	FreqMHz   uint32
	Merge     bool
}

func newProfileReportCmd(f *factory, runF func(context.Context, *profileReportOptions) error) *cobra.Command {
	opts := &profileReportOptions{IO: f.IO}
	var views []string
	var freq uint
	cmd := &cobra.Command{
		Use:   "report <trace>... [--view <view>,...] [--top <n>] [--device <n>] [--kernel-map <file>]",
		Short: "Summarise an ET runtime trace per kernel, per copy, per device",
		Long: `Summarise one or more ET runtime profiler traces (et_runtime_trace.json,
written by ggml-et with GGML_ET_PROFILE=<dir>).

Views (--view, comma-separated or repeated; default summary,kernels,memcpy):
  summary  window, devices and frequencies, launches, copies, device busy %,
           host time blocked in waits, warnings
  kernels  per kernel name: launches, device exec (total, mean, min, max,
           p50, p95, % of kernel time), queue+barrier wait, host launch API
           time, submit delay and end-to-end latency; sorted by total exec
  memcpy   per direction (H2D, D2H, D2D, internal): count, bytes, device
           DMA time and bandwidth, end-to-end bandwidth
  gaps     device idle gaps between consecutive kernels (device cycles):
           histogram and the top --top gaps with the kernels on either side
  streams  the commands of each stream in order, with device times
  slowest  the --top slowest launches with their times from trace start
  all      every view

Kernel names come from kernel_id.json beside each trace, or --kernel-map;
unknown ids are shown as kernel#<id>. A missing or empty map, a truncated
or empty trace (a crashed run) give a warning and a partial report.

Several traces are reported one after the other, labelled by file name or
by label=path; --merge aggregates them into one report. Device times are
converted with each device's frequency (GetDeviceProperties); raw cycles
are kept in -o json (schema et.profile-report/v1, raw _ns, _cycles and
_bytes values) and -o csv (one table per kind of row, keyed by report). -o markdown fits a CI job summary.
-o html writes one self-contained page (inline SVG and CSS, no script, no
network) with every view by default: per-kernel time bars with launch
counts, copy bandwidth, the gap histogram and a per-device timeline of
launches and copies.`,
		Example: `  $ et profile report et_runtime_trace.json
  $ et profile report trace.json --view all --top 5
  $ et profile report base=old/et_runtime_trace.json new=new/et_runtime_trace.json
  $ et profile report run1.json run2.json --merge -o markdown >> "$GITHUB_STEP_SUMMARY"
  $ et profile report trace.json --kernel-map kernel_id.json -o json
  $ et profile report trace.json -o html > profile.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Output = f.Global.Output
			opts.Traces = args
			if len(views) == 0 && f.Global.Output == "html" {
				// A page has room for every view (the timeline is streams).
				views = []string{"all"}
			}
			v, err := parseViews(views)
			if err != nil {
				return err
			}
			opts.Views = v
			if opts.Top <= 0 {
				return usageErrorf("--top must be at least 1")
			}
			if freq > 1<<20 {
				return usageErrorf("--freq-mhz %d is not a plausible frequency", freq)
			}
			opts.FreqMHz = uint32(freq)
			stdin := 0
			for _, a := range args {
				if _, p := splitLabel(a); p == "-" {
					stdin++
				}
			}
			if stdin > 1 {
				return usageErrorf("only one trace can be read from stdin")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return profileReportRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&views, "view", nil, "views to show, comma-separated: summary, kernels, memcpy, gaps, streams, slowest, all (default summary,kernels,memcpy; all with -o html)")
	fl.IntVar(&opts.Top, "top", 10, "number of entries in the gaps, slowest and streams lists")
	fl.IntVarP(&opts.Device, "device", "d", -1, "report only this device; -1 means all devices")
	fl.StringVar(&opts.KernelMap, "kernel-map", "", "kernel_id.json to name kernels (default: the file beside each trace)")
	fl.UintVar(&freq, "freq-mhz", 0, "device frequency in MHz, overriding GetDeviceProperties (for traces without it)")
	fl.BoolVar(&opts.Merge, "merge", false, "aggregate several traces into one report")
	return cmd
}

func parseViews(in []string) ([]string, error) {
	if len(in) == 0 {
		return append([]string(nil), profile.DefaultViews...), nil
	}
	seen := map[string]bool{}
	for _, v := range in {
		v = strings.TrimSpace(strings.ToLower(v))
		switch {
		case v == "all":
			for _, a := range profile.AllViews {
				seen[a] = true
			}
		case slices.Contains(profile.AllViews, v):
			seen[v] = true
		default:
			return nil, usageErrorf("unknown view %q (want %s or all)", v, strings.Join(profile.AllViews, ", "))
		}
	}
	var out []string
	for _, a := range profile.AllViews {
		if seen[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

// splitLabel splits "label=path"; a plain path is labelled by its base name.
func splitLabel(arg string) (label, path string) {
	if i := strings.IndexByte(arg, '='); i > 0 && !strings.ContainsAny(arg[:i], `/\`) {
		return arg[:i], arg[i+1:]
	}
	if arg == "-" {
		return "stdin", arg
	}
	return filepath.Base(arg), arg
}

// profileReportDoc is the JSON form (schema et.profile-report/v1).
type profileReportDoc struct {
	Schema  string                 `json:"schema"`
	Reports []profileReportLabeled `json:"reports"`
}

type profileReportLabeled struct {
	Label string   `json:"label"`
	Files []string `json:"files"`
	Views []string `json:"views"`
	*profile.Report
}

func profileReportRun(ctx context.Context, f *factory, opts *profileReportOptions) error {
	var explicitMap *kernelmap.Map
	if opts.KernelMap != "" {
		m, warns, _, err := kernelMapFor(ctx, "", opts.KernelMap)
		if err != nil {
			return err
		}
		for _, w := range warns {
			f.warnf("%s", w)
		}
		explicitMap = m
	}
	ropts := profile.ReportOptions{Views: opts.Views, Top: opts.Top, Device: opts.Device,
		FreqMHz: opts.FreqMHz, OverrideFreq: opts.FreqMHz != 0}
	doc := profileReportDoc{Schema: "et.profile-report/v1"}
	var agg *profile.Aggregator
	var mergedFiles, labels []string
	for _, arg := range opts.Traces {
		if err := ctx.Err(); err != nil {
			return err
		}
		label, path := splitLabel(arg)
		km := explicitMap
		if km == nil {
			m, warns, note, err := kernelMapFor(ctx, path, "")
			if err != nil {
				return err
			}
			for _, w := range warns {
				f.warnf("%s", w)
			}
			if note != "" {
				f.logf("%s", note)
			}
			km = m
		}
		ropts.Kernels = km
		if agg == nil || !opts.Merge {
			agg = profile.NewAggregator(ropts)
		}
		if err := feedTrace(ctx, f, agg, path, ropts); err != nil {
			return err
		}
		if opts.Merge {
			mergedFiles = append(mergedFiles, path)
			labels = append(labels, label)
			continue
		}
		doc.Reports = append(doc.Reports, profileReportLabeled{Label: label, Files: []string{path}, Views: opts.Views, Report: agg.Finish()})
	}
	if opts.Merge {
		doc.Reports = append(doc.Reports, profileReportLabeled{Label: strings.Join(labels, "+"), Files: mergedFiles, Views: opts.Views, Report: agg.Finish()})
	}
	for _, r := range doc.Reports {
		for _, w := range r.Warnings {
			f.warnf("%s", w.String())
		}
	}
	var tables []table
	for _, r := range doc.Reports {
		prefix := ""
		if len(doc.Reports) > 1 {
			prefix = r.Label + ": "
		}
		tables = append(tables, reportTables(prefix, r, opts)...)
	}
	return f.render(document{Data: doc, Tables: tables})
}

func feedTrace(ctx context.Context, f *factory, agg *profile.Aggregator, path string, ropts profile.ReportOptions) error {
	r, closeFn, err := openTrace(ctx, path, f.IO.In)
	if err != nil {
		return err
	}
	defer closeFn()
	return agg.Feed(profile.Input{File: traceName(path), R: r}, ropts)
}

func reportTables(prefix string, r profileReportLabeled, opts *profileReportOptions) []table {
	var out []table
	want := func(v string) bool { return slices.Contains(opts.Views, v) }
	s := r.Summary
	if want(profile.ViewSummary) {
		t := table{Title: prefix + "summary", Headers: []string{"item", "value"}}
		add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
		add("trace", strings.Join(r.Files, ", "))
		ev := fmt.Sprintf("%d (%s, version %d)", s.Events, fmtBytes(uint64(s.Bytes)), s.Version)
		if s.Truncated {
			ev += ", truncated"
		}
		add("events", ev)
		add("window", fmtNS(s.WindowNS))
		for _, d := range s.Devices {
			freq := "frequency unknown"
			if d.FreqMHz != 0 {
				freq = fmt.Sprintf("%d MHz", d.FreqMHz)
			}
			add(fmt.Sprintf("device %d", d.ID), fmt.Sprintf("%s, %d launches, busy %s", freq, d.Launches, fmtPct(d.BusyPercent)))
		}
		l := fmt.Sprintf("%d (%d kernels)", s.Launches, s.KernelNames)
		if s.IncompleteLaunches > 0 {
			l += fmt.Sprintf(", %d incomplete", s.IncompleteLaunches)
		}
		add("launches", l)
		c := strconv.Itoa(s.Copies)
		if s.IncompleteCopies > 0 {
			c += fmt.Sprintf(", %d incomplete", s.IncompleteCopies)
		}
		add("copies", c)
		add("host blocked in waits", fmt.Sprintf("%s (%d waits)", fmtNS(s.HostWaitNS), s.Waits))
		if s.IDWraps > 0 {
			add("event id wraps", strconv.Itoa(s.IDWraps))
		}
		if s.UnmatchedResponses > 0 {
			add("unmatched responses", strconv.Itoa(s.UnmatchedResponses))
		}
		add("warnings", strconv.Itoa(s.Warnings))
		if s.UberkernelOnly {
			t.Notes = append(t.Notes, "Only uberkernel was launched: per-op attribution is unavailable from this trace.")
		}
		out = append(out, t)
	}
	if want(profile.ViewKernels) {
		t := table{Title: prefix + "kernels (device exec)", Headers: []string{"kernel", "launches", "total", "%", "mean", "min", "max", "p50", "p95",
			"wait q+b", "launch api", "submit", "end-to-end"}, Right: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
			Optional: []string{"p95", "p50", "min", "max", "launch api", "submit", "wait q+b"}}
		// A device without a frequency has no device times: its kernels
		// are shown in cycles, not as 0 ns.
		var noFreq []string
		for _, d := range s.Devices {
			if d.FreqMHz == 0 && d.Launches > 0 {
				noFreq = append(noFreq, strconv.Itoa(d.ID))
			}
		}
		for _, k := range r.Kernels {
			launches := strconv.Itoa(k.Launches)
			if k.Incomplete > 0 {
				launches += fmt.Sprintf(" (%d inc.)", k.Incomplete)
			}
			if len(noFreq) > 0 && k.TotalExecNS == 0 && k.TotalExecCycles > 0 {
				mean := "-"
				if n := k.Launches - k.Incomplete; n > 0 {
					mean = diffFmtCycles(float64(k.TotalExecCycles) / float64(n))
				}
				t.Rows = append(t.Rows, []string{k.Name, launches, diffFmtCycles(float64(k.TotalExecCycles)), fmtPct(k.ExecPercent), mean,
					"-", "-", "-", "-", "-", fmtNS(k.MeanLaunchAPINS), fmtNS(k.MeanSubmitDelayNS), fmtNS(k.MeanEndToEndNS)})
				continue
			}
			t.Rows = append(t.Rows, []string{k.Name, launches, fmtNS(k.TotalExecNS), fmtPct(k.ExecPercent), fmtNS(k.MeanExecNS),
				fmtNS(k.MinExecNS), fmtNS(k.MaxExecNS), fmtNS(k.P50ExecNS), fmtNS(k.P95ExecNS), fmtNS(k.MeanWaitNS),
				fmtNS(k.MeanLaunchAPINS), fmtNS(k.MeanSubmitDelayNS), fmtNS(k.MeanEndToEndNS)})
		}
		t.Notes = append(t.Notes, "Device times at each device's frequency; wait, launch api, submit and end-to-end are means.")
		if len(noFreq) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("Device %s: no frequency in the trace, so total and mean are device cycles and %% a share of cycles; give --freq-mhz MHZ for times.", strings.Join(noFreq, ", ")))
		}
		out = append(out, t)
	}
	if want(profile.ViewMemcpy) {
		t := table{Title: prefix + "memcpy", Headers: []string{"direction", "count", "bytes", "dma time", "device bw", "end-to-end bw", "cma staging", "wait"},
			Right: []int{1, 2, 3, 4, 5, 6, 7}, Optional: []string{"cma staging", "wait", "end-to-end bw"}}
		for _, c := range r.Memcpy {
			bytes := fmtBytes(c.Bytes)
			if c.SizedCount < c.Count {
				bytes += fmt.Sprintf(" (%d of %d sized)", c.SizedCount, c.Count)
			}
			t.Rows = append(t.Rows, []string{c.Direction, strconv.Itoa(c.Count), bytes, fmtNS(c.DMAExecNS), fmtBW(c.DeviceBytesPerSec),
				fmtBW(c.EndToEndBytesPerSec), fmtNS(c.CMANS), fmtNS(c.DMAWaitNS)})
		}
		out = append(out, t)
	}
	if want(profile.ViewGaps) {
		for _, g := range r.Gaps {
			h := table{Title: fmt.Sprintf("%sdevice %d idle gaps between kernels (cycles)", prefix, g.Device), Headers: []string{"gap", "count", "total cycles"}, Right: []int{1, 2}}
			for _, b := range g.Histogram {
				rng := fmt.Sprintf("%s-%s", shortCycles(b.MinCycles), shortCycles(b.MaxCycles))
				if b.MaxCycles == 0 {
					rng = "≥ " + shortCycles(b.MinCycles)
				}
				h.Rows = append(h.Rows, []string{rng, strconv.Itoa(b.Count), fmtCycles(b.TotalCycles)})
			}
			h.Notes = append(h.Notes, fmt.Sprintf("%d kernels, %d gaps totalling %d cycles, %d overlapping starts", g.Kernels, g.Gaps, g.TotalGapCycles, g.Overlaps))
			out = append(out, h)
			tp := table{Title: fmt.Sprintf("%sdevice %d top gaps", prefix, g.Device), Headers: []string{"#", "cycles", "time", "at cycle", "after kernel", "before kernel"}, Right: []int{0, 1, 2, 3}}
			for i, x := range g.Top {
				tp.Rows = append(tp.Rows, []string{strconv.Itoa(i + 1), fmtCycles(x.Cycles), fmtNS(x.NS), fmtCycles(x.AtCycles), x.Before, x.After})
			}
			out = append(out, tp)
		}
	}
	if want(profile.ViewStreams) {
		for _, st := range r.Streams {
			t := table{Title: fmt.Sprintf("%sdevice %d stream %d", prefix, st.Device, st.Stream), Headers: []string{"#", "kind", "name", "event", "submit", "dispatch cycle", "wait cycles", "exec cycles"},
				Right: []int{0, 3, 4, 5, 6, 7}, Optional: []string{"dispatch cycle", "submit"}}
			n := len(st.Commands)
			if n > opts.Top {
				n = opts.Top
			}
			for i, c := range st.Commands[:n] {
				t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), c.Kind, c.Name, strconv.Itoa(int(c.EventID)), fmtNS(c.SubmitNS),
					fmtCycles(c.DispatchCycles), fmtCycles(c.WaitCycles), fmtCycles(c.ExecCycles)})
			}
			if st.Total > n {
				t.Notes = append(t.Notes, fmt.Sprintf("first %d of %d commands (--top)", n, st.Total))
			}
			out = append(out, t)
		}
	}
	if want(profile.ViewSlowest) {
		t := table{Title: prefix + "slowest launches", Headers: []string{"#", "kernel", "device", "stream", "event", "launched at", "exec", "wait q+b", "end-to-end"},
			Right: []int{0, 2, 3, 4, 5, 6, 7, 8}, Optional: []string{"launched at", "stream", "wait q+b"}}
		for i, l := range r.Slowest {
			t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), l.Kernel, strconv.Itoa(l.Device), strconv.Itoa(l.Stream), strconv.Itoa(int(l.EventID)),
				nsOrDash(l.LaunchNS), fmtNS(l.ExecNS), fmtNS(l.WaitNS), nsOrDash(l.EndToEndNS)})
		}
		t.Notes = append(t.Notes, "launched at: time since the start of profiling")
		out = append(out, t)
	}
	return out
}

func shortCycles(c uint64) string {
	switch {
	case c >= 1000000 && c%1000000 == 0:
		return strconv.FormatUint(c/1000000, 10) + "M"
	case c >= 1000 && c%1000 == 0:
		return strconv.FormatUint(c/1000, 10) + "k"
	}
	return strconv.FormatUint(c, 10)
}

// profileReportCSV is the raw CSV form: for the views asked for, one table
// per kind of row, every row keyed by its report's label (and device,
// stream), all reports in one table.
func profileReportCSV(d profileReportDoc) []csvTable {
	type summary struct {
		Report string   `json:"report"`
		Files  []string `json:"files"`
		profile.ReportSummary
	}
	type device struct {
		Report string `json:"report"`
		profile.DeviceSummary
	}
	type warning struct {
		Report string `json:"report"`
		profile.Warning
	}
	type kernel struct {
		Report string `json:"report"`
		profile.KernelRow
	}
	type copyRow struct {
		Report string `json:"report"`
		profile.CopyRow
	}
	type gaps struct {
		Report string `json:"report"`
		profile.DeviceGaps
	}
	type bucket struct {
		Report string `json:"report"`
		Device int    `json:"device"`
		profile.GapBucket
	}
	type gap struct {
		Report string `json:"report"`
		Device int    `json:"device"`
		profile.Gap
	}
	type command struct {
		Report string `json:"report"`
		Device int    `json:"device"`
		Stream int    `json:"stream"`
		profile.Command
	}
	type slow struct {
		Report string `json:"report"`
		profile.SlowLaunch
	}
	var (
		summaries = []summary{}
		devices   = []device{}
		warnings  = []warning{}
		kernels   = []kernel{}
		copies    = []copyRow{}
		devGaps   = []gaps{}
		buckets   = []bucket{}
		tops      = []gap{}
		commands  = []command{}
		slowest   = []slow{}
	)
	views := profile.DefaultViews
	for _, r := range d.Reports {
		views = r.Views
		l := r.Label
		summaries = append(summaries, summary{Report: l, Files: r.Files, ReportSummary: r.Summary})
		for _, x := range r.Summary.Devices {
			devices = append(devices, device{l, x})
		}
		for _, x := range r.Warnings {
			warnings = append(warnings, warning{l, x})
		}
		for _, x := range r.Kernels {
			kernels = append(kernels, kernel{l, x})
		}
		for _, x := range r.Memcpy {
			copies = append(copies, copyRow{l, x})
		}
		for _, g := range r.Gaps {
			devGaps = append(devGaps, gaps{l, g})
			for _, x := range g.Histogram {
				buckets = append(buckets, bucket{l, g.Device, x})
			}
			for _, x := range g.Top {
				tops = append(tops, gap{l, g.Device, x})
			}
		}
		for _, s := range r.Streams {
			for _, x := range s.Commands {
				commands = append(commands, command{l, s.Device, s.Stream, x})
			}
		}
		for _, x := range r.Slowest {
			slowest = append(slowest, slow{l, x})
		}
	}
	var out []csvTable
	for _, v := range views {
		switch v {
		case profile.ViewSummary:
			out = append(out, csvTable{"summary", summaries}, csvTable{"devices", devices}, csvTable{"warnings", warnings})
		case profile.ViewKernels:
			out = append(out, csvTable{"kernels", kernels})
		case profile.ViewMemcpy:
			out = append(out, csvTable{"memcpy", copies})
		case profile.ViewGaps:
			out = append(out, csvTable{"gaps", devGaps}, csvTable{"gap_histogram", buckets}, csvTable{"top_gaps", tops})
		case profile.ViewStreams:
			out = append(out, csvTable{"stream_commands", commands})
		case profile.ViewSlowest:
			out = append(out, csvTable{"slowest", slowest})
		}
	}
	return out
}

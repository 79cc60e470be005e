package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/profile"
)

// The HTML pages of et profile report and et profile diff.

// htmlProfileReport writes the page of a profile report: per report, the
// charts of each view it has, then its tables.
func htmlProfileReport(p *htmlPage, d profileReportDoc) {
	var labels []string
	for _, r := range d.Reports {
		labels = append(labels, r.Label)
	}
	p.begin("et profile report: "+strings.Join(labels, ", "), "et profile report")
	for _, r := range d.Reports {
		htmlReportSection(p, r)
	}
	p.end()
}

func htmlReportSection(p *htmlPage, r profileReportLabeled) {
	want := func(v string) bool { return slices.Contains(r.Views, v) }
	s := r.Summary
	p.printf("<section class=\"report\" data-label=\"%s\">\n<h2>%s</h2>\n", esc(r.Label), esc(r.Label))
	p.meta("meta", "trace: "+strings.Join(r.Files, ", "))
	freq := map[int]uint32{}
	for _, dv := range s.Devices {
		freq[dv.ID] = dv.FreqMHz
	}
	if want(profile.ViewSummary) {
		p.raw("<h3>Summary</h3>\n")
		ev := fmt.Sprintf("%d (%s, version %d)", s.Events, fmtBytes(uint64(s.Bytes)), s.Version)
		if s.Truncated {
			ev += ", truncated"
		}
		rows := [][]string{
			{"events", ev},
			{"window", fmtNS(s.WindowNS)},
			{"launches", fmt.Sprintf("%d (%d kernels, %d incomplete)", s.Launches, s.KernelNames, s.IncompleteLaunches)},
			{"copies", fmt.Sprintf("%d (%d incomplete)", s.Copies, s.IncompleteCopies)},
			{"host blocked in waits", fmt.Sprintf("%s (%d waits)", fmtNS(s.HostWaitNS), s.Waits)},
			{"warnings", strconv.Itoa(s.Warnings)},
		}
		if s.IDWraps > 0 {
			rows = append(rows, []string{"event id wraps", strconv.Itoa(s.IDWraps)})
		}
		if s.UnmatchedResponses > 0 {
			rows = append(rows, []string{"unmatched responses", strconv.Itoa(s.UnmatchedResponses)})
		}
		p.table("summary", []string{"item", "value"}, rows)
		if s.UberkernelOnly {
			p.meta("note", "Only uberkernel was launched: per-op attribution is unavailable from this trace.")
		}
		var bars []hbar
		var drows [][]string
		for _, dv := range s.Devices {
			f := "unknown"
			if dv.FreqMHz != 0 {
				f = strconv.Itoa(int(dv.FreqMHz))
			}
			busy := math.Max(dv.BusyPercent, 0)
			bars = append(bars, hbar{Label: fmt.Sprintf("device %d", dv.ID), Value: busy,
				Text: fmt.Sprintf("busy %s · %d launches", fmtPct(dv.BusyPercent), dv.Launches)})
			drows = append(drows, []string{strconv.Itoa(dv.ID), f, strconv.Itoa(dv.Launches), fmtPct(dv.BusyPercent),
				fmtCycles(dv.ExecCycles), fmtCycles(dv.SpanCycles)})
		}
		if len(bars) > 0 {
			p.hbars("chart busy", "Device busy: kernel exec cycles / span from first dispatch to last end (100% = the full bar)", bars, 100)
		}
		p.table("devices", []string{"device", "MHz", "launches", "busy", "exec cycles", "span cycles"}, drows, 1, 2, 3, 4, 5)
	}
	if want(profile.ViewKernels) {
		p.raw("<h3>Kernels</h3>\n")
		var bars []hbar
		var total float64
		cycles := false
		for _, k := range r.Kernels {
			if k.TotalExecNS == 0 && k.TotalExecCycles > 0 {
				cycles = true
			}
		}
		for _, k := range r.Kernels {
			v, t := float64(k.TotalExecNS), fmtNS(k.TotalExecNS)
			if cycles {
				v, t = float64(k.TotalExecCycles), fmtCycles(k.TotalExecCycles)+" cycles"
			}
			total += v
			lt := fmt.Sprintf("%s · %d launches", t, k.Launches)
			if k.Incomplete > 0 {
				lt += fmt.Sprintf(" (%d incomplete)", k.Incomplete)
			}
			lt += " · " + fmtPct(k.ExecPercent)
			bars = append(bars, hbar{Label: k.Name, Value: v, Text: lt})
		}
		unit := "device exec time"
		tot := fmtNS(int64(total))
		if cycles {
			unit, tot = "device exec cycles (a device has no frequency)", strconv.FormatFloat(total, 'f', 0, 64)+" cycles"
		}
		if len(bars) == 0 {
			p.meta("note", "no kernel launches")
		} else {
			p.hbars("chart kernels", fmt.Sprintf("Total %s per kernel, with launch counts and share; all kernels: %s", unit, tot), bars, 0)
		}
	}
	if want(profile.ViewStreams) {
		p.raw("<h3>Timeline</h3>\n")
		htmlTimeline(p, r.Streams, freq)
	} else {
		p.meta("note", "timeline: add --view streams (or --view all) to draw each device's launches and copies")
	}
	if want(profile.ViewMemcpy) {
		p.raw("<h3>Copies</h3>\n")
		var bars []hbar
		for _, c := range r.Memcpy {
			bars = append(bars,
				hbar{Label: c.Direction + " DMA", Value: c.DeviceBytesPerSec, Class: "copy",
					Text: fmt.Sprintf("%s · %d copies · %s", fmtBW(c.DeviceBytesPerSec), c.Count, fmtBytes(c.Bytes))},
				hbar{Label: c.Direction + " end to end", Value: c.EndToEndBytesPerSec,
					Text: fmt.Sprintf("%s · end to end", fmtBW(c.EndToEndBytesPerSec))})
		}
		if len(bars) == 0 {
			p.meta("note", "no copies")
		} else {
			p.hbars("chart memcpy", "Copy bandwidth per direction: device DMA (hatched) and end to end from the API call (solid)", bars, 0)
		}
	}
	if want(profile.ViewGaps) {
		p.raw("<h3>Idle gaps between kernels</h3>\n")
		for _, g := range r.Gaps {
			var bars []hbar
			for _, b := range g.Histogram {
				lbl := fmt.Sprintf("%s – %s cycles", shortCycles(b.MinCycles), shortCycles(b.MaxCycles))
				if b.MaxCycles == 0 {
					lbl = fmt.Sprintf("≥ %s cycles", shortCycles(b.MinCycles))
				}
				bars = append(bars, hbar{Label: lbl, Value: float64(b.Count),
					Text: fmt.Sprintf("%d gaps · %s cycles", b.Count, shortCycles(b.TotalCycles))})
			}
			cap := fmt.Sprintf("Device %d: %d gaps between %d kernels, %s cycles idle, %d overlaps", g.Device, g.Gaps, g.Kernels, shortCycles(g.TotalGapCycles), g.Overlaps)
			if len(bars) > 0 {
				p.hbars("chart gaps", cap, bars, 0)
			} else {
				p.meta("note", cap)
			}
			var rows [][]string
			for _, t := range g.Top {
				rows = append(rows, []string{shortCycles(t.Cycles), nsOrDash(t.NS), shortCycles(t.AtCycles), t.Before, t.After})
			}
			if len(rows) > 0 {
				p.table("top-gaps", []string{"gap cycles", "gap", "at cycles", "before", "after"}, rows, 0, 1, 2)
			}
		}
	}
	if want(profile.ViewSlowest) {
		p.raw("<h3>Slowest launches</h3>\n")
		var bars []hbar
		var rows [][]string
		for _, l := range r.Slowest {
			v, t := float64(l.ExecNS), fmtNS(l.ExecNS)
			if l.ExecNS == 0 && l.ExecCycles > 0 {
				v, t = float64(l.ExecCycles), fmtCycles(l.ExecCycles)+" cycles"
			}
			lbl := fmt.Sprintf("%s #%d", l.Kernel, l.EventID)
			bars = append(bars, hbar{Label: lbl, Value: v, Text: fmt.Sprintf("%s · device %d stream %d", t, l.Device, l.Stream)})
			rows = append(rows, []string{l.Kernel, strconv.Itoa(int(l.EventID)), strconv.Itoa(l.Device), strconv.Itoa(l.Stream),
				nsOrDash(l.LaunchNS), fmtCycles(l.ExecCycles), fmtNS(l.ExecNS), fmtNS(l.WaitNS), fmtNS(l.EndToEndNS)})
		}
		if len(bars) > 0 {
			p.hbars("chart slowest", "Slowest launches (device exec)", bars, 0)
		}
		p.table("slowest", []string{"kernel", "event", "device", "stream", "launched at", "exec cycles", "exec", "wait", "end to end"}, rows, 1, 2, 3, 4, 5, 6, 7, 8)
	}
	if want(profile.ViewKernels) && len(r.Kernels) > 0 {
		var rows [][]string
		for _, k := range r.Kernels {
			rows = append(rows, []string{k.Name, strconv.Itoa(k.Launches), strconv.Itoa(k.Incomplete), fmtNS(k.TotalExecNS),
				fmtCycles(k.TotalExecCycles), fmtPct(k.ExecPercent), fmtNS(k.MeanExecNS), fmtNS(k.P50ExecNS), fmtNS(k.P95ExecNS),
				fmtNS(k.TotalWaitNS), fmtNS(k.MeanEndToEndNS)})
		}
		p.raw("<h3>Kernel table</h3>\n")
		p.table("kernels", []string{"kernel", "launches", "incomplete", "total", "total cycles", "%", "mean", "p50", "p95", "wait q+b", "mean end to end"},
			rows, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	}
	if want(profile.ViewMemcpy) && len(r.Memcpy) > 0 {
		var rows [][]string
		for _, c := range r.Memcpy {
			rows = append(rows, []string{c.Direction, strconv.Itoa(c.Count), fmtBytes(c.Bytes), strconv.Itoa(c.Commands),
				fmtNS(c.DMAExecNS), fmtBW(c.DeviceBytesPerSec), fmtNS(c.EndToEndNS), fmtBW(c.EndToEndBytesPerSec), strconv.Itoa(c.Incomplete)})
		}
		p.raw("<h3>Copy table</h3>\n")
		p.table("memcpy", []string{"direction", "copies", "bytes", "DMA commands", "DMA exec", "DMA bandwidth", "end to end", "end-to-end bandwidth", "incomplete"},
			rows, 1, 2, 3, 4, 5, 6, 7, 8)
	}
	if len(r.Warnings) > 0 {
		p.raw("<h3>Trace warnings</h3>\n<ul class=\"warnings\">\n")
		for _, w := range r.Warnings {
			p.printf("<li>%s</li>\n", esc(w.String()))
		}
		p.raw("</ul>\n")
	}
	p.raw("</section>\n")
}

// maxTimelineCommands bounds the rectangles of a timeline (a page stays
// small enough for a browser; the CSV and JSON have every command).
const maxTimelineCommands = 5000

// htmlTimeline draws one chart per device: a lane per stream, each kernel
// a solid rectangle and each copy a hatched one, at its dispatch time for
// its exec time, in device time from the device's first dispatch.
func htmlTimeline(p *htmlPage, streams []profile.StreamCommands, freq map[int]uint32) {
	if len(streams) == 0 {
		p.meta("note", "no stream commands")
		return
	}
	var devs []int
	for _, s := range streams {
		if !slices.Contains(devs, s.Device) {
			devs = append(devs, s.Device)
		}
	}
	slices.Sort(devs)
	drawn := 0
	for _, dev := range devs {
		var lanes []profile.StreamCommands
		first, last := uint64(math.MaxUint64), uint64(0)
		kernels, copies := 0, 0
		for _, s := range streams {
			if s.Device != dev {
				continue
			}
			lanes = append(lanes, s)
			for _, c := range s.Commands {
				first = min(first, c.DispatchCycles)
				last = max(last, c.DispatchCycles+c.ExecCycles)
				if c.Kind == "kernel" {
					kernels++
				} else {
					copies++
				}
			}
		}
		if first > last {
			first, last = 0, 0
		}
		span := float64(last - first)
		if span <= 0 {
			span = 1
		}
		const labelW, plotW, laneH, axisH = 90.0, 900.0, 26.0, 22.0
		h := laneH*float64(len(lanes)) + axisH + 4
		f := freq[dev]
		toText := func(cyc float64) string {
			if f != 0 {
				return fmtNS(int64(cyc * 1000 / float64(f)))
			}
			return shortCycles(uint64(cyc)) + " cyc"
		}
		caption := fmt.Sprintf("Device %d: %d kernel launches (solid) and %d copies (hatched) over %s, per stream", dev, kernels, copies, toText(span))
		p.printf("<figure class=\"chart timeline\" data-device=\"%d\" data-kernels=\"%d\" data-copies=\"%d\">\n", dev, kernels, copies)
		p.printf("<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">\n<title>%s</title>\n",
			labelW+plotW+10, h, labelW+plotW+10, h, esc(caption))
		for i := 0; i <= 4; i++ {
			x := labelW + plotW*float64(i)/4
			p.printf("<line class=\"grid\" x1=\"%s\" y1=\"0\" x2=\"%s\" y2=\"%g\"/>", svgNum(x), svgNum(x), h-axisH)
			anchor := "middle"
			if i == 0 {
				anchor = "start"
			} else if i == 4 {
				anchor = "end"
			}
			p.printf("<text class=\"muted\" x=\"%s\" y=\"%g\" text-anchor=\"%s\">%s</text>\n", svgNum(x), h-6, anchor, esc(toText(span*float64(i)/4)))
		}
		for li, s := range lanes {
			y := float64(li) * laneH
			p.printf("<g class=\"lane\" data-stream=\"%d\"><text x=\"%g\" y=\"%g\" text-anchor=\"end\">stream %d</text>", s.Stream, labelW-6, y+17, s.Stream)
			for _, c := range s.Commands {
				if drawn >= maxTimelineCommands {
					break
				}
				drawn++
				x := labelW + plotW*float64(c.DispatchCycles-first)/span
				w := math.Max(plotW*float64(c.ExecCycles)/span, 1)
				kind := "kernel"
				if c.Kind != "kernel" {
					kind = "copy"
				}
				what := c.Name
				if kind == "copy" {
					what = c.Kind
					if c.Bytes > 0 {
						what += " " + fmtBytes(c.Bytes)
					}
				}
				p.printf("<rect class=\"span %s\" x=\"%s\" y=\"%g\" width=\"%s\" height=\"%g\" data-name=\"%s\"><title>%s</title></rect>",
					kind, svgNum(x), y+4, svgNum(w), laneH-8, esc(what),
					esc(fmt.Sprintf("%s (event %d): at %s, exec %s", what, c.EventID, toText(float64(c.DispatchCycles-first)), toText(float64(c.ExecCycles)))))
			}
			p.raw("</g>\n")
		}
		p.printf("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
	}
	if total := func() int {
		n := 0
		for _, s := range streams {
			n += len(s.Commands)
		}
		return n
	}(); total > drawn {
		p.meta("note", fmt.Sprintf("timeline: %d of %d commands drawn (-o csv or -o json has them all)", drawn, total))
	}
	p.raw("<ul class=\"legend\"><li>▮ solid: kernel launch</li><li>▤ hatched: copy (H2D, D2H, D2D)</li><li>hover a rectangle for its name and times</li></ul>\n")
}

// htmlProfileDiff writes the page of a profile diff: per kernel and copy
// direction, the change of the median against the threshold band, the
// verdict as a shape and a word, and both medians with their intervals.
func htmlProfileDiff(p *htmlPage, d profileDiffDoc) {
	p.begin(fmt.Sprintf("et profile diff: %s vs %s", d.Base.Label, d.New.Label), "et profile diff")
	verdict := "no regression"
	if d.Regression {
		verdict = "REGRESSION: a kernel or copy is slower"
	}
	p.printf("<p class=\"verdict %s\"><strong>%s</strong></p>\n", map[bool]string{true: "slower", false: "same"}[d.Regression], esc(verdict))
	p.table("inputs", []string{"", "label", "trace", "kernel map", "events", "launches", "copies", "incomplete"}, [][]string{
		{"base", d.Base.Label, d.Base.Path, d.Base.KernelMap, strconv.Itoa(d.Base.Events), strconv.Itoa(d.Base.Launches), strconv.Itoa(d.Base.Copies), strconv.Itoa(d.Base.Incomplete)},
		{"new", d.New.Label, d.New.Path, d.New.KernelMap, strconv.Itoa(d.New.Events), strconv.Itoa(d.New.Launches), strconv.Itoa(d.New.Copies), strconv.Itoa(d.New.Incomplete)},
	}, 4, 5, 6, 7)
	var counts []string
	for _, v := range []profile.Verdict{profile.VerdictSlower, profile.VerdictFaster, profile.VerdictSame, profile.VerdictNew, profile.VerdictGone} {
		if c := d.Counts[string(v)]; c > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", c, v))
		}
	}
	if len(counts) == 0 {
		counts = []string{"nothing to compare"}
	}
	p.meta("meta counts", strings.Join(counts, ", "))
	p.meta("meta", fmt.Sprintf("slower/faster: the median changed by more than %s%% and the Mann-Whitney U test has p < %g; times in %s",
		strconv.FormatFloat(d.ThresholdPct, 'f', -1, 64), d.Alpha, d.Unit))
	for _, n := range d.Notes {
		p.meta("note", n)
	}
	htmlDiffChart(p, d)
	var rows [][]string
	for _, r := range d.Rows {
		rows = append(rows, []string{r.Kind, r.Name, diffSideText(d.Unit, r.Base), diffSideText(d.Unit, r.New), diffChangeText(r), diffPText(r),
			verdictShape(r.Verdict) + "\u00a0" + string(r.Verdict), r.Reason})
	}
	p.table("diff", []string{"kind", "name", d.Base.Label + ": n, median [interval]", d.New.Label + ": n, median [interval]", "change", "p", "verdict", "reason"}, rows, 4, 5)
	p.end()
}

// verdictShape is the mark of a verdict, readable without colour.
func verdictShape(v profile.Verdict) string {
	switch v {
	case profile.VerdictSlower:
		return "▲"
	case profile.VerdictFaster:
		return "▼"
	case profile.VerdictNew:
		return "✚"
	case profile.VerdictGone:
		return "✖"
	}
	return "●"
}

func diffTime(unit string, cycles float64, ns *float64) string {
	if unit == string(profile.UnitNS) && ns != nil {
		return fmtNS(int64(math.Round(*ns)))
	}
	return diffFmtCycles(cycles)
}

func diffSideText(unit string, s *profile.DiffSide) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%d, %s %s", s.Count, diffTime(unit, s.MedianExecCycles, s.MedianExecNS), diffInterval(unit, s))
}

// diffInterval is a side's median interval, "[lo – hi, 95%]".
func diffInterval(unit string, s *profile.DiffSide) string {
	return fmt.Sprintf("[%s – %s, %s%%]", diffTime(unit, s.MedianLowExecCycles, s.MedianLowExecNS),
		diffTime(unit, s.MedianHighExecCycles, s.MedianHighExecNS), strconv.FormatFloat(math.Floor(s.MedianIntervalPct*10)/10, 'f', -1, 64))
}

// diffRelInterval is a side's median interval as changes from the base
// median, in percent (ok false when undefined).
func diffRelInterval(unit string, s, base *profile.DiffSide) (lo, hi float64, ok bool) {
	if s == nil || base == nil {
		return 0, 0, false
	}
	pick := func(c float64, ns *float64) float64 {
		if unit == string(profile.UnitNS) && ns != nil {
			return *ns
		}
		return c
	}
	m := pick(base.MedianExecCycles, base.MedianExecNS)
	if m <= 0 {
		return 0, 0, false
	}
	return 100 * (pick(s.MedianLowExecCycles, s.MedianLowExecNS)/m - 1), 100 * (pick(s.MedianHighExecCycles, s.MedianHighExecNS)/m - 1), true
}

func diffChangeText(r profile.DiffRow) string {
	if r.ChangePct != nil {
		return fmt.Sprintf("%+.1f%%", *r.ChangePct)
	}
	if r.Base != nil && r.New != nil {
		return "+inf"
	}
	return "-"
}

func diffPText(r profile.DiffRow) string {
	if r.PValue == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *r.PValue)
}

// htmlDiffChart draws each row's change of the median as a bar from 0,
// the ±threshold band around 0 shaded, the verdict as a shape at the end
// of the bar, and the text "base → new (change, verdict)".
func htmlDiffChart(p *htmlPage, d profileDiffDoc) {
	if len(d.Rows) == 0 {
		p.meta("note", "nothing to compare")
		return
	}
	lim := math.Max(2*d.ThresholdPct, 10)
	for _, r := range d.Rows {
		if r.ChangePct != nil && !math.IsInf(*r.ChangePct, 0) {
			lim = math.Max(lim, math.Abs(*r.ChangePct))
		}
	}
	// The intervals widen the axis up to twice what the changes need; a
	// wider one (a copy direction mixing sizes) is cut at the edge.
	changes := lim
	for _, r := range d.Rows {
		for _, side := range []*profile.DiffSide{r.Base, r.New} {
			if lo, hi, ok := diffRelInterval(d.Unit, side, r.Base); ok {
				lim = math.Min(math.Max(lim, math.Max(math.Abs(lo), math.Abs(hi))), 2*changes)
			}
		}
	}
	lim = math.Min(lim*1.05, 1000)
	const labelW, plotW, textW, rowH = 260.0, 420.0, 360.0, 24.0
	h := rowH*float64(len(d.Rows)) + 28
	mid := labelW + plotW/2
	xOf := func(pct float64) float64 { return mid + plotW/2*math.Max(-1, math.Min(1, pct/lim)) }
	caption := fmt.Sprintf("Change of the median exec time, %s → %s, with each median's 95%% confidence interval (cut at the axis edge); shaded: ±%s%% threshold; axis ±%.0f%%", d.Base.Label, d.New.Label,
		strconv.FormatFloat(d.ThresholdPct, 'f', -1, 64), lim)
	p.printf("<figure class=\"chart diff\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">\n<title>%s</title>\n",
		labelW+plotW+textW, h, labelW+plotW+textW, h, esc(caption))
	tx := xOf(-d.ThresholdPct)
	p.printf("<rect class=\"bar base\" x=\"%s\" y=\"0\" width=\"%s\" height=\"%g\" opacity=\"0.5\"/>\n", svgNum(tx), svgNum(xOf(d.ThresholdPct)-tx), h-22)
	p.printf("<line class=\"axis\" x1=\"%g\" y1=\"0\" x2=\"%g\" y2=\"%g\"/>\n", mid, mid, h-22)
	for _, v := range []float64{-lim, 0, lim} {
		p.printf("<text class=\"muted\" x=\"%s\" y=\"%g\" text-anchor=\"middle\">%+.0f%%</text>\n", svgNum(xOf(v)), h-6, v)
	}
	for i, r := range d.Rows {
		y := 2 + rowH*float64(i)
		cls := string(r.Verdict)
		p.printf("<g class=\"row\" data-label=\"%s\" data-verdict=\"%s\">", esc(r.Name), esc(cls))
		p.printf("<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>", labelW-6, y+15, esc(clip(r.Kind+" "+r.Name, 38)))
		end := mid
		if r.ChangePct != nil {
			end = xOf(*r.ChangePct)
			x0, x1 := math.Min(mid, end), math.Max(mid, end)
			p.printf("<rect class=\"bar %s\" x=\"%s\" y=\"%g\" width=\"%s\" height=\"%g\" data-value=\"%s\"/>", cls, svgNum(x0), y+6, svgNum(math.Max(x1-x0, 1)), rowH-12, svgNum(*r.ChangePct))
		}
		for i, side := range []*profile.DiffSide{r.Base, r.New} {
			if lo, hi, ok := diffRelInterval(d.Unit, side, r.Base); ok {
				cy := y + rowH/2 + float64(4*(2*i-1))
				p.printf("<path class=\"range %s\" data-low=\"%s\" data-high=\"%s\" d=\"M%s,%s H%s M%s,%s v4 M%s,%s v4\"/>", []string{"base-range", "new-range"}[i],
					svgNum(lo), svgNum(hi), svgNum(xOf(lo)), svgNum(cy), svgNum(xOf(hi)), svgNum(xOf(lo)), svgNum(cy-2), svgNum(xOf(hi)), svgNum(cy-2))
			}
		}
		p.raw(verdictMark(r.Verdict, end, y+rowH/2))
		text := fmt.Sprintf("%s → %s  (%s, %s)", diffMedian(d.Unit, r.Base), diffMedian(d.Unit, r.New), diffChangeText(r), r.Verdict)
		p.printf("<text class=\"value\" x=\"%g\" y=\"%g\">%s</text></g>\n", labelW+plotW+8, y+15, esc(text))
	}
	p.printf("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
	p.raw("<ul class=\"legend\"><li>▲ slower</li><li>▼ faster</li><li>● same</li><li>✚ new (only in new)</li><li>✖ gone (only in base)</li><li>├┤ upper: base median's 95% interval, lower: new median's, both relative to the base median</li></ul>\n")
}

func diffMedian(unit string, s *profile.DiffSide) string {
	if s == nil {
		return "absent"
	}
	return diffTime(unit, s.MedianExecCycles, s.MedianExecNS)
}

// verdictMark is the SVG shape of a verdict centred at (x, y).
func verdictMark(v profile.Verdict, x, y float64) string {
	c := "mark " + string(v)
	switch v {
	case profile.VerdictSlower:
		return fmt.Sprintf("<path class=\"%s\" d=\"M%s,%s l6,10 h-12 z\"/>", c, svgNum(x), svgNum(y-6))
	case profile.VerdictFaster:
		return fmt.Sprintf("<path class=\"%s\" d=\"M%s,%s l6,-10 h-12 z\"/>", c, svgNum(x), svgNum(y+6))
	case profile.VerdictNew:
		return fmt.Sprintf("<path class=\"%s\" d=\"M%s,%s h4 v-4 h4 v4 h4 v4 h-4 v4 h-4 v-4 h-4 z\"/>", c, svgNum(x-6), svgNum(y-2))
	case profile.VerdictGone:
		return fmt.Sprintf("<path class=\"%s\" d=\"M%s,%s l12,12 M%s,%s l-12,12\" stroke-width=\"3\"/>", c, svgNum(x-6), svgNum(y-6), svgNum(x+6), svgNum(y-6))
	}
	return fmt.Sprintf("<circle class=\"%s\" cx=\"%s\" cy=\"%s\" r=\"5\"/>", c, svgNum(x), svgNum(y))
}

package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// The HTML page of et run-op: the pass/fail count, each output's NMSE
// against its tolerance on a log scale, the results table, and the perf,
// fault and ABI tables when the run has them.

func htmlRunOp(p *htmlPage, d runner.Report) {
	p.begin(fmt.Sprintf("et run-op on %s (%s)", d.Device, d.Backend), "et run-op")
	counts := map[verdict.Status]int{}
	for _, r := range d.Results {
		counts[r.Status]++
	}
	overall := "PASS"
	if d.Failed() {
		overall = "FAIL"
	}
	var parts []string
	for _, s := range verdict.Statuses {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	p.printf("<p class=\"verdict\"><span class=\"status %s\">%s %s</span> <span class=\"total\">%s</span> on %s (%s, numerics: %s)</p>\n",
		overall, statusShape(verdict.Status(overall)), overall, esc(countsSummary(d.Count())), esc(d.Device), esc(d.Backend), esc(d.Numerics))
	if len(parts) > 0 {
		p.meta("meta counts", strings.Join(parts, ", "))
	}
	if d.Numerics == "reference" {
		p.meta("note", fmt.Sprintf("reference device: the outputs are et's reference math behind the ABI; checked are the dispatch and the params of %d kernel run(s), not device numerics", d.ABIChecked))
	}
	drawn := chartedResults(d.Results, maxNMSERows)
	htmlNMSEChart(p, drawn)
	if len(drawn) < len(d.Results) {
		p.meta("note", fmt.Sprintf("chart: %d of %d outputs drawn (every one that did not pass, then passes in order); the table has them all", len(drawn), len(d.Results)))
	}
	var rows [][]string
	for _, r := range d.Results {
		kernel := r.Kernel
		if r.Fusion != "" {
			kernel += " (" + r.Fusion + ")"
		}
		note := r.Detail
		if r.Status == verdict.Fallback && len(r.Reasons) > 0 {
			note = strings.TrimSpace(note + " ran on the host: " + plan.JoinTexts(r.Reasons))
		}
		if r.Expected != "" {
			note = strings.TrimSpace(note + " expected failure: " + r.Expected)
		}
		rows = append(rows, []string{r.Case, r.Node, r.Op, kernel, statusShape(r.Status) + "\u00a0" + string(r.Status), nmseCell(r), limitCell(r.MaxNMSE),
			maxAbsCell(r), driftCell(r), runTime(r.TimeNS), note})
	}
	p.raw("<h2>Results</h2>\n")
	p.table("results", []string{"case", "node", "op", "kernel", "status", "nmse", "max nmse", "max abs err", "drift", "time", "detail"}, rows, 5, 6, 7, 8, 9)
	p.meta("note", "nmse: each node on the device's own inputs of it; drift: the output against the reference chained from the inputs")
	if len(d.Perf) > 0 {
		htmlPerf(p, d)
	}
	if len(d.Faults) > 0 {
		var rows [][]string
		for _, f := range d.Faults {
			for _, e := range f.Errors {
				ctx := ""
				if len(e.Contexts) > 0 {
					c := e.Contexts[0]
					ctx = fmt.Sprintf("hart %d cause %d epc %#x tval %#x", c.Hart, c.Cause, c.EPC, c.TVal)
					if len(e.Contexts) > 1 {
						ctx += fmt.Sprintf(" (+%d contexts)", len(e.Contexts)-1)
					}
				}
				rows = append(rows, []string{f.Case, f.Step, e.Code, e.Message, ctx})
			}
		}
		p.raw("<h2>Kernel faults</h2>\n")
		p.table("faults", []string{"case", "step", "code", "message", "first context"}, rows)
	}
	if len(d.ABIMismatches) > 0 {
		var rows [][]string
		for _, m := range d.ABIMismatches {
			for _, fd := range m.Fields {
				rows = append(rows, []string{m.Case, m.Step, m.Kernel, fd.Field, fd.Planned, fd.Decoded})
			}
		}
		p.raw("<h2>ABI mismatches</h2>\n")
		p.table("abi-mismatches", []string{"case", "step", "kernel", "field", "planned", "decoded"}, rows)
	}
	p.end()
}

// statusShape is the mark of a status, readable without colour.
func statusShape(s verdict.Status) string {
	switch s {
	case verdict.Pass:
		return "●"
	case verdict.Fail:
		return "✖"
	case verdict.XFail:
		return "◆"
	case verdict.XPass:
		return "■"
	case verdict.Fallback:
		return "◇"
	}
	return "–"
}

func limitCell(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'e', 0, 64)
}

// nmsePoint is where an output's NMSE is drawn: its log10, or the left
// edge for 0, the right edge for NaN or inf; ok is false when it has no
// NMSE (SKIP).
func nmsePoint(r runner.Result) (v float64, label string, ok bool) {
	switch {
	case r.Status == verdict.Skip:
		return 0, "not run", false
	case r.Failure == ops.FailNaN:
		return math.Inf(1), "NaN", true
	case r.Failure == ops.FailInfMismatch || r.Failure == ops.FailInfSign:
		return math.Inf(1), "inf", true
	case r.NMSE <= 0 || math.IsNaN(float64(r.NMSE)):
		return math.Inf(-1), "0", true
	}
	return math.Log10(float64(r.NMSE)), strconv.FormatFloat(float64(r.NMSE), 'e', 2, 64), true
}

// maxNMSERows bounds the rows of the NMSE chart (a page of a whole
// test-backend-ops run stays light); the results table has every output.
const maxNMSERows = 2000

// chartedResults picks at most n results for the chart, in input order:
// every one that did not pass first, then passes while room is left.
func chartedResults(results []runner.Result, n int) []runner.Result {
	if len(results) <= n {
		return results
	}
	keep := make([]bool, len(results))
	left := n
	for i, r := range results {
		if r.Status != verdict.Pass && left > 0 {
			keep[i] = true
			left--
		}
	}
	for i := range results {
		if !keep[i] && left > 0 && results[i].Status == verdict.Pass {
			keep[i] = true
			left--
		}
	}
	var out []runner.Result
	for i, r := range results {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out
}

// htmlNMSEChart draws one row per output: its NMSE as a shape on a log
// axis, its tolerance (max_nmse) as a dashed tick, and the status word.
func htmlNMSEChart(p *htmlPage, results []runner.Result) {
	if len(results) == 0 {
		p.meta("note", "no outputs")
		return
	}
	lo, hi := 0.0, -8.0
	seen := false
	for _, r := range results {
		for _, v := range []float64{float64(r.NMSE), r.MaxNMSE} {
			if v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
				l := math.Log10(v)
				if !seen {
					lo, hi, seen = l, l, true
				}
				lo, hi = math.Min(lo, l), math.Max(hi, l)
			}
		}
	}
	if !seen {
		lo, hi = -10, 0
	}
	lo, hi = math.Floor(lo)-1, math.Ceil(hi)+1
	lo = math.Max(lo, -30)
	if hi-lo < 4 {
		lo = hi - 4
	}
	const labelW, plotW, textW, rowH, axisH = 300.0, 520.0, 250.0, 22.0, 24.0
	h := rowH*float64(len(results)) + axisH + 4
	edge := 10.0
	xOf := func(l float64) float64 {
		switch {
		case math.IsInf(l, -1):
			return labelW + 2
		case math.IsInf(l, 1):
			return labelW + plotW - 2
		}
		return labelW + edge + (plotW-2*edge)*(math.Max(lo, math.Min(hi, l))-lo)/(hi-lo)
	}
	caption := "NMSE of each output (log scale) against its tolerance (dashed): left of the tick passes; 0 at the left edge, NaN or inf at the right"
	p.raw("<h2>NMSE against tolerance</h2>\n")
	p.printf("<figure class=\"chart nmse\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">\n<title>%s</title>\n",
		labelW+plotW+textW, h, labelW+plotW+textW, h, esc(caption))
	plotH := h - axisH
	for e := lo; e <= hi; e++ {
		x := xOf(e)
		p.printf("<line class=\"grid\" x1=\"%s\" y1=\"0\" x2=\"%s\" y2=\"%g\"/>", svgNum(x), svgNum(x), plotH)
		if int(e-lo)%max(1, int((hi-lo)/8)) == 0 {
			p.printf("<text class=\"muted\" x=\"%s\" y=\"%g\" text-anchor=\"middle\">1e%d</text>\n", svgNum(x), h-6, int(e))
		}
	}
	for i, r := range results {
		y := 2 + rowH*float64(i)
		cy := y + rowH/2
		p.printf("<g class=\"row\" data-label=\"%s\" data-status=\"%s\">", esc(r.Case+"/"+r.Node), esc(string(r.Status)))
		p.printf("<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>", labelW-6, y+15, esc(clip(r.Case+" "+r.Node, 44)))
		if r.MaxNMSE > 0 {
			x := xOf(math.Log10(r.MaxNMSE))
			p.printf("<line class=\"limit\" x1=\"%s\" y1=\"%g\" x2=\"%s\" y2=\"%g\" data-value=\"%s\"/>", svgNum(x), y+2, svgNum(x), y+rowH-2, strconv.FormatFloat(r.MaxNMSE, 'g', -1, 64))
		}
		v, label, ok := nmsePoint(r)
		if ok {
			p.raw(statusMark(r.Status, xOf(v), cy, strconv.FormatFloat(float64(r.NMSE), 'g', -1, 64)))
		}
		text := string(r.Status) + "  " + label
		if r.MaxNMSE > 0 {
			text += " / " + limitCell(r.MaxNMSE)
		}
		p.printf("<text class=\"value status %s\" x=\"%g\" y=\"%g\">%s</text></g>\n", esc(string(r.Status)), labelW+plotW+8, y+15, esc(statusShape(r.Status)+" "+text))
	}
	p.printf("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
	p.raw("<ul class=\"legend\"><li>● PASS</li><li>✖ FAIL</li><li>◇ FALLBACK (ran on the host)</li><li>◆ XFAIL (expected failure)</li><li>■ XPASS (listed as failing, passed)</li><li>┆ tolerance</li></ul>\n")
}

// statusMark is the SVG shape of a status centred at (x, y).
func statusMark(status verdict.Status, x, y float64, value string) string {
	c := "mark " + string(status)
	X, Y := svgNum(x), svgNum(y)
	switch status {
	case verdict.Fail:
		return fmt.Sprintf("<path class=\"%s\" data-value=\"%s\" d=\"M%s,%s m-6,-4 l2,-2 l4,4 l4,-4 l2,2 l-4,4 l4,4 l-2,2 l-4,-4 l-4,4 l-2,-2 l4,-4 z\"/>", c, value, X, Y)
	case verdict.XFail:
		return fmt.Sprintf("<path class=\"%s\" data-value=\"%s\" d=\"M%s,%s m0,-7 l7,7 l-7,7 l-7,-7 z\"/>", c, value, X, Y)
	case verdict.XPass:
		return fmt.Sprintf("<rect class=\"%s\" data-value=\"%s\" x=\"%s\" y=\"%s\" width=\"11\" height=\"11\"/>", c, value, svgNum(x-5.5), svgNum(y-5.5))
	case verdict.Fallback:
		return fmt.Sprintf("<path class=\"%s\" data-value=\"%s\" d=\"M%s,%s m0,-7 l7,7 l-7,7 l-7,-7 z m0,3 l-4,4 l4,4 l4,-4 z\" fill-rule=\"evenodd\"/>", c, value, X, Y)
	}
	return fmt.Sprintf("<circle class=\"%s\" data-value=\"%s\" cx=\"%s\" cy=\"%s\" r=\"5\"/>", c, value, X, Y)
}

// htmlPerf draws the median time of each timed launch with its min–max
// range (and its cycles and share of the peak when measured), then the
// tables of et run-op --perf (runOpPerfTables): the perf table, whose
// "% of peak" cells under 10% are marked low, and the launches.
func htmlPerf(p *htmlPage, d runner.Report) {
	perf := d.Perf
	p.raw("<h2>Performance</h2>\n")
	if perf[0].Clock == "host" {
		p.meta("note", "host time: the reference device runs its kernels on this CPU")
	}
	maxNS := 0.0
	for _, t := range perf {
		maxNS = math.Max(maxNS, float64(t.MaxNS))
	}
	if maxNS <= 0 {
		maxNS = 1
	}
	const labelW, plotW, textW, rowH = 300.0, 520.0, 260.0, 22.0
	h := rowH*float64(len(perf)) + 6
	caption := "Median wall time of each timed launch (bar) with its min–max range over the runs (whiskers)"
	p.printf("<figure class=\"chart perf\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">\n<title>%s</title>\n",
		labelW+plotW+textW, h, labelW+plotW+textW, h, esc(caption))
	for i, t := range perf {
		y := 3 + rowH*float64(i)
		x := func(ns int64) float64 { return labelW + plotW*float64(ns)/maxNS }
		p.printf("<g class=\"row\" data-label=\"%s\">", esc(t.Case+" "+t.Kernel))
		p.printf("<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>", labelW-6, y+14, esc(clip(t.Case+" "+t.Kernel, 44)))
		p.printf("<rect class=\"bar\" x=\"%g\" y=\"%g\" width=\"%s\" height=\"%g\" data-value=\"%d\"/>", labelW, y+3, svgNum(x(t.MedNS)-labelW), rowH-8, t.MedNS)
		p.printf("<path class=\"range\" d=\"M%s,%g H%s M%s,%g v8 M%s,%g v8\"/>", svgNum(x(t.MinNS)), y+rowH/2-1, svgNum(x(t.MaxNS)),
			svgNum(x(t.MinNS)), y+rowH/2-5, svgNum(x(t.MaxNS)), y+rowH/2-5)
		rate := fmt.Sprintf("%.2f GB/s", t.BytesPerS/1e9)
		if t.Flops > 0 {
			rate = fmt.Sprintf("%.2f GFLOP/s", t.FlopsPerS/1e9)
		}
		if t.MedCycles > 0 {
			rate += fmt.Sprintf(" · %d cycles", t.MedCycles)
		}
		if t.Efficiency != nil {
			rate += " · " + peakCell(t.Efficiency) + " of peak"
		}
		p.printf("<text class=\"value\" x=\"%s\" y=\"%g\">%s</text></g>\n", svgNum(x(t.MaxNS)+6), y+14,
			esc(fmt.Sprintf("%s [%s–%s] · %s", runTime(t.MedNS), runTime(t.MinNS), runTime(t.MaxNS), rate)))
	}
	p.printf("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
	for i, t := range runOpPerfTables(d) {
		class := "perf"
		if i > 0 {
			class = "launches"
			if strings.HasPrefix(t.Title, "Device cycles against") {
				class = "baseline"
			}
			p.printf("<h3>%s</h3>\n", esc(t.Title))
		} else {
			p.meta("note", t.Title)
		}
		p.table(class, t.Headers, t.Rows, t.Right...)
		for _, n := range t.Notes {
			p.meta("note", n)
		}
	}
	for _, t := range perf {
		if e := t.Efficiency; e != nil && e.PeakPct < lowPeakPct {
			p.meta("low", fmt.Sprintf("%s %s: %s of peak", t.Case, t.Kernel, peakCell(e)))
		}
	}
}

// lowPeakPct is the share of the peak under which -o html flags a launch.
const lowPeakPct = 10

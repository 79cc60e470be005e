package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/runner"
)

// The HTML form of a command (-o html) is one self-contained page that a CI
// system keeps as an artefact: inline CSS and SVG, no script, no font, no
// image, no link (a Content-Security-Policy of default-src 'none' makes the
// browser refuse any fetch). Pages are written from the command's typed
// document, the one JSON and CSV use (profile report, profile diff,
// run-op); other commands get their display tables as HTML tables.
//
// The page is well-formed XML as well as HTML (every element closed, every
// attribute quoted, only the entities XML knows), so tests read it with
// encoding/xml. Every string from outside (trace and kernel map names,
// case names, paths) goes through esc: control characters and invalid
// UTF-8 become visible escapes (sanitizeText), then &, <, >, " and ' become
// entities. Colour is never the only carrier of meaning: bars have
// patterns, markers have shapes, and every mark has a text label.

// htmlPage accumulates a page.
type htmlPage struct {
	b strings.Builder
	// ids numbers the SVG elements that need an id on this page.
	ids int
}

// esc makes s safe as HTML/XML text or attribute value.
func esc(s string) string {
	return html.EscapeString(sanitizeText(s))
}

func (p *htmlPage) printf(format string, args ...any) {
	fmt.Fprintf(&p.b, format, args...)
}

func (p *htmlPage) raw(s string) { p.b.WriteString(s) }

// htmlCSS is the page's style: light by default, dark under
// prefers-color-scheme: dark. Status colours are backed by patterns and
// shapes (see htmlDefs).
const htmlCSS = `
:root { --fg:#1b1f24; --muted:#57606a; --bg:#ffffff; --panel:#f6f8fa; --grid:#d0d7de;
  --bar:#3465a4; --bar2:#8e6bb8; --copy:#2a9d8f; --pass:#1a7f37; --fail:#cf222e; --warn:#9a6700; --skip:#6e7781; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --panel:#161b22; --grid:#30363d;
    --bar:#6ca4f8; --bar2:#c297ff; --copy:#4fd1c5; --pass:#3fb950; --fail:#ff7b72; --warn:#d29922; --skip:#8b949e; }
}
html { background:var(--bg); color:var(--fg); }
body { font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin:1.5em auto; max-width:1100px; padding:0 1em; }
h1 { font-size:1.4em; margin:0 0 .3em; } h2 { font-size:1.15em; margin:1.6em 0 .4em; border-bottom:1px solid var(--grid); }
h3 { font-size:1em; margin:1.2em 0 .3em; }
p.meta, p.note, figcaption { color:var(--muted); margin:.2em 0; }
p.low { color:var(--warn); margin:.2em 0; font-weight:600; }
table { border-collapse:collapse; margin:.4em 0 .8em; font-variant-numeric:tabular-nums; }
th, td { border:1px solid var(--grid); padding:.2em .55em; text-align:left; vertical-align:top; }
th { background:var(--panel); } td.num { text-align:right; white-space:nowrap; }
code { font-family:ui-monospace, "SFMono-Regular", Menlo, monospace; font-size:.92em; }
.status { font-weight:600; white-space:nowrap; }
.PASS, .XFAIL, .faster { color:var(--pass); } .FAIL, .XPASS, .slower { color:var(--fail); }
.FALLBACK, .new, .gone { color:var(--warn); } .SKIP, .same { color:var(--skip); }
svg { display:block; max-width:100%; height:auto; margin:.3em 0 .6em; }
svg text { fill:var(--fg); font:12px system-ui, sans-serif; } svg text.muted { fill:var(--muted); }
svg .axis, svg .grid { stroke:var(--grid); stroke-width:1; } svg .limit { stroke:var(--fg); stroke-width:1.5; stroke-dasharray:5 3; }
svg .bar { fill:var(--bar); } svg .bar.wait { fill:url(#pat-wait); stroke:var(--bar2); }
svg .bar.copy, svg .span.copy { fill:url(#pat-copy); stroke:var(--copy); } svg .span.kernel { fill:var(--bar); }
svg .bar.base { fill:url(#pat-base); stroke:var(--muted); }
svg .range { stroke:var(--fg); stroke-width:1.5; }
svg .mark.PASS, svg .mark.XFAIL { fill:var(--pass); } svg .mark.FAIL, svg .mark.XPASS { fill:var(--fail); }
svg .mark.FALLBACK { fill:var(--warn); } svg .mark.SKIP { fill:var(--skip); }
svg path.mark.gone { stroke:var(--skip); fill:none; }
svg .slower { fill:var(--fail); } svg .faster { fill:var(--pass); } svg .same, svg .new, svg .gone { fill:var(--skip); }
svg .pat { stroke:var(--fg); stroke-width:1; } svg .patfill { fill:var(--panel); }
ul.legend { list-style:none; padding:0; margin:.2em 0; color:var(--muted); } ul.legend li { display:inline; margin-right:1.2em; }
`

// htmlDefs are the SVG patterns the charts use (in the first SVG of a page;
// ids are document-wide).
const htmlDefs = `<defs>` +
	`<pattern id="pat-wait" width="6" height="6" patternUnits="userSpaceOnUse"><rect class="patfill" width="6" height="6"/><path class="pat" d="M0,6 L6,0"/></pattern>` +
	`<pattern id="pat-copy" width="6" height="6" patternUnits="userSpaceOnUse"><rect class="patfill" width="6" height="6"/><path class="pat" d="M0,3 L6,3"/></pattern>` +
	`<pattern id="pat-base" width="6" height="6" patternUnits="userSpaceOnUse"><rect class="patfill" width="6" height="6"/><path class="pat" d="M0,0 L6,6"/></pattern>` +
	`</defs>`

// begin writes the head of a page and its h1.
func (p *htmlPage) begin(title, heading string) {
	p.raw("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n")
	p.raw("<meta charset=\"utf-8\"/>\n")
	p.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"/>\n")
	p.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	p.raw("<meta name=\"color-scheme\" content=\"light dark\"/>\n")
	p.printf("<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(title), htmlCSS)
	p.printf("<h1>%s</h1>\n", esc(heading))
	// The patterns, in an SVG of no size, so that every chart can use them.
	p.printf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\" aria-hidden=\"true\" style=\"position:absolute\">%s</svg>\n", htmlDefs)
}

func (p *htmlPage) end() { p.raw("</body>\n</html>\n") }

// meta writes a line of muted text.
func (p *htmlPage) meta(class, text string) {
	p.printf("<p class=\"%s\">%s</p>\n", class, esc(text))
}

// htmlTable writes a table of text cells; num lists the right-aligned
// columns. class is set on the table (tests find tables by it).
func (p *htmlPage) table(class string, headers []string, rows [][]string, num ...int) {
	isNum := map[int]bool{}
	for _, c := range num {
		isNum[c] = true
	}
	p.printf("<table class=\"%s\">\n<thead><tr>", esc(class))
	for _, h := range headers {
		p.printf("<th>%s</th>", esc(h))
	}
	p.raw("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		p.raw("<tr>")
		for i, c := range r {
			if isNum[i] {
				p.printf("<td class=\"num\">%s</td>", esc(c))
			} else {
				p.printf("<td>%s</td>", esc(c))
			}
		}
		p.raw("</tr>\n")
	}
	p.raw("</tbody>\n</table>\n")
}

// hbar is one row of a horizontal bar chart: a label, up to two stacked
// segments (the second one hatched) and the text printed after the bar.
type hbar struct {
	Label string
	Value float64 // the first segment (the bar's data-value)
	Extra float64 // a second, hatched segment after the first (0: none)
	Text  string
	Class string // extra class of the first segment
}

// hbars writes a horizontal bar chart; max is the scale's full width (0:
// the largest bar).
func (p *htmlPage) hbars(class, caption string, bars []hbar, max float64) {
	if max <= 0 {
		for _, b := range bars {
			max = math.Max(max, b.Value+b.Extra)
		}
	}
	const labelW, barW, textW, rowH = 260.0, 520.0, 240.0, 22.0
	h := rowH*float64(len(bars)) + 8
	p.printf("<figure class=\"%s\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">\n",
		esc(class), labelW+barW+textW, h, labelW+barW+textW, h)
	p.printf("<title>%s</title>\n", esc(caption))
	p.printf("<line class=\"axis\" x1=\"%g\" y1=\"0\" x2=\"%g\" y2=\"%g\"/>\n", labelW, labelW, h)
	for i, b := range bars {
		y := 4 + rowH*float64(i)
		w, w2 := 0.0, 0.0
		if max > 0 {
			w = barW * b.Value / max
			w2 = barW * b.Extra / max
		}
		cls := "bar"
		if b.Class != "" {
			cls += " " + b.Class
		}
		p.printf("<g class=\"row\" data-label=\"%s\">", esc(b.Label))
		p.printf("<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>", labelW-6, y+14, esc(clip(b.Label, 38)))
		p.printf("<rect class=\"%s\" x=\"%g\" y=\"%g\" width=\"%s\" height=\"%g\" data-value=\"%s\"/>",
			cls, labelW, y+2, svgNum(w), rowH-6, svgNum(b.Value))
		if b.Extra > 0 {
			p.printf("<rect class=\"bar wait\" x=\"%s\" y=\"%g\" width=\"%s\" height=\"%g\" data-value=\"%s\"/>",
				svgNum(labelW+w), y+2, svgNum(w2), rowH-6, svgNum(b.Extra))
		}
		p.printf("<text class=\"value\" x=\"%s\" y=\"%g\">%s</text></g>\n", svgNum(labelW+w+w2+6), y+14, esc(b.Text))
	}
	p.printf("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
}

// clip shortens a label for a chart (the full text is in the tables and in
// the row's data-label).
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// svgNum formats a coordinate or value: shortest form, no exponent for
// ordinary sizes, 0 for NaN or infinities (which a chart never draws).
func svgNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	if v != 0 && (math.Abs(v) < 1e-4 || math.Abs(v) >= 1e15) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// writeHTML writes the HTML page of a document.
func writeHTML(w io.Writer, doc document) error {
	var p htmlPage
	switch d := doc.Data.(type) {
	case profileReportDoc:
		htmlProfileReport(&p, d)
	case profileDiffDoc:
		htmlProfileDiff(&p, d)
	case runner.Report:
		htmlRunOp(&p, d)
	case *runner.Report:
		htmlRunOp(&p, *d)
	default:
		htmlTables(&p, doc)
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}

// htmlTables is the page of a command without charts: its display tables.
func htmlTables(p *htmlPage, doc document) {
	title := "et"
	if s := schemaOf(doc.Data); s != "" {
		title = s
	}
	p.begin(title, title)
	for _, t := range doc.Tables {
		if t.Title != "" {
			p.printf("<h2>%s</h2>\n", esc(t.Title))
		}
		p.table("data", t.Headers, t.Rows, t.Right...)
		for _, n := range t.Notes {
			p.meta("note", n)
		}
	}
	p.end()
}

// schemaOf returns a document's schema ("et.devices/v1"), or "".
func schemaOf(data any) string {
	v := reflect.ValueOf(data)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("Schema"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

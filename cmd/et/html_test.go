package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/profile"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// node is an element of a parsed page.
type node struct {
	Name     string
	Attr     map[string]string
	Children []*node
	Text     string // the element's own character data, concatenated
}

// parsePage reads a page as strict XML (the pages are XHTML-compatible)
// and returns its root element. Any unclosed element, unquoted attribute,
// stray '<' or '&' or HTML-only entity fails the test.
func parsePage(t *testing.T, page []byte) *node {
	t.Helper()
	return parseTree(t, page, true)
}

// parseTree is parsePage, or with strict false a lenient reading of HTML
// as a browser serialises it (void elements unclosed, HTML entities).
func parseTree(t *testing.T, page []byte, strict bool) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = strict
	if !strict {
		dec.AutoClose = xml.HTMLAutoClose
		dec.Entity = xml.HTMLEntity
	}
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v\n%s", err, page)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &node{Name: tk.Name.Local, Attr: map[string]string{}}
			for _, a := range tk.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(tk)
			}
		}
	}
	if root == nil || root.Name != "html" {
		t.Fatalf("no html root element")
	}
	return root
}

// all returns the elements under n (n included) for which ok is true.
func (n *node) all(ok func(*node) bool) []*node {
	var out []*node
	var walk func(*node)
	walk = func(x *node) {
		if ok(x) {
			out = append(out, x)
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

func (n *node) hasClass(c string) bool {
	return slices.Contains(strings.Fields(n.Attr["class"]), c)
}

// byClass returns the elements with the given element name ("" any) and class.
func (n *node) byClass(name, class string) []*node {
	return n.all(func(x *node) bool { return (name == "" || x.Name == name) && x.hasClass(class) })
}

// text is all character data under n.
func (n *node) text() string {
	var b strings.Builder
	var walk func(*node)
	walk = func(x *node) {
		b.WriteString(x.Text)
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// checkSelfContained fails on anything that would make the browser fetch:
// scripts, external references, links; and checks the page's CSP.
func checkSelfContained(t *testing.T, root *node, page []byte) {
	t.Helper()
	for _, n := range root.all(func(*node) bool { return true }) {
		switch n.Name {
		case "script", "link", "img", "iframe", "object", "embed", "image", "use", "a":
			t.Errorf("page has a <%s> element", n.Name)
		}
		for k, v := range n.Attr {
			if k == "src" || k == "href" || strings.HasPrefix(k, "on") {
				t.Errorf("<%s> has attribute %s=%q", n.Name, k, v)
			}
			if k != "xmlns" && strings.Contains(v, "://") {
				t.Errorf("<%s %s=%q> names a URL", n.Name, k, v)
			}
		}
	}
	if bytes.Contains(page, []byte("@import")) || bytes.Contains(page, []byte("url(http")) {
		t.Error("CSS fetches something")
	}
	csp := root.all(func(n *node) bool { return n.Name == "meta" && n.Attr["http-equiv"] == "Content-Security-Policy" })
	if len(csp) != 1 || !strings.HasPrefix(csp[0].Attr["content"], "default-src 'none'") {
		t.Errorf("no default-src 'none' CSP: %v", csp)
	}
	if !bytes.Contains(page, []byte("prefers-color-scheme: dark")) {
		t.Error("no dark colour scheme")
	}
}

func attrFloat(t *testing.T, n *node, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.Attr[key], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.Name, key, n.Attr[key], err)
	}
	return v
}

func TestHTMLProfileReport(t *testing.T) {
	root := t.TempDir()
	res, path := genTraceRes(t, root, "a", profile.GenOptions{Ops: 200, Seed: 3, Devices: 2, Kernels: 5})
	code, out, errOut := runCLI(t, nil, "profile", "report", "run1="+path, "-o", "html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page := parsePage(t, []byte(out))
	checkSelfContained(t, page, []byte(out))

	// Every view by default with -o html.
	rep := page.byClass("section", "report")
	if len(rep) != 1 || rep[0].Attr["data-label"] != "run1" {
		t.Fatalf("report sections: %v", rep)
	}
	for _, h := range []string{"Summary", "Kernels", "Copies", "Idle gaps between kernels", "Timeline", "Slowest launches"} {
		if len(page.all(func(n *node) bool { return n.Name == "h3" && n.Text == h })) != 1 {
			t.Errorf("no %q view", h)
		}
	}

	// Kernel bars: one per kernel name the generator wrote, with its total
	// exec time (cycles at 1000 MHz = ns) and its launch count in the label.
	kchart := page.byClass("figure", "kernels")
	if len(kchart) != 1 {
		t.Fatalf("%d kernel charts", len(kchart))
	}
	rows := kchart[0].byClass("g", "row")
	if len(rows) != len(res.LaunchesByName) {
		t.Fatalf("%d kernel bars, generator wrote %d kernel names", len(rows), len(res.LaunchesByName))
	}
	var sum float64
	prevW := math.Inf(1)
	for _, r := range rows {
		name := r.Attr["data-label"]
		bar := r.byClass("rect", "bar")
		if len(bar) != 1 {
			t.Fatalf("kernel %s: %d bars", name, len(bar))
		}
		if got, want := attrFloat(t, bar[0], "data-value"), float64(res.ExecCycles[name]); got != want {
			t.Errorf("kernel %s: bar value %g ns, generator's exec %g cycles at 1000 MHz", name, got, want)
		}
		w := attrFloat(t, bar[0], "width")
		if w > prevW+1e-9 {
			t.Errorf("kernel %s: bar wider than the one above (bars are sorted by total)", name)
		}
		prevW = w
		sum += attrFloat(t, bar[0], "data-value")
		if lbl := r.text(); !strings.Contains(lbl, strconv.Itoa(res.LaunchesByName[name])+" launches") {
			t.Errorf("kernel %s: label %q lacks its %d launches", name, lbl, res.LaunchesByName[name])
		}
	}
	if prevW <= 0 {
		t.Error("a zero-width bar")
	}
	var total uint64
	for _, c := range res.ExecCycles {
		total += c
	}
	if sum != float64(total) || !strings.Contains(kchart[0].text(), "all kernels: "+fmtNS(int64(total))) {
		t.Errorf("kernel total %g, generator %d; caption %q", sum, total, kchart[0].text())
	}

	// Timeline: one chart per device; its rectangles are every launch and
	// every copy of that device.
	tl := page.byClass("figure", "timeline")
	if len(tl) != 2 {
		t.Fatalf("%d timelines, want one per device (2)", len(tl))
	}
	var kernels, copies int
	for _, f := range tl {
		k := len(f.byClass("rect", "kernel"))
		c := len(f.byClass("rect", "copy"))
		if strconv.Itoa(k) != f.Attr["data-kernels"] || strconv.Itoa(c) != f.Attr["data-copies"] {
			t.Errorf("device %s: %d kernel and %d copy rectangles, figure says %s and %s", f.Attr["data-device"], k, c, f.Attr["data-kernels"], f.Attr["data-copies"])
		}
		kernels += k
		copies += c
		for _, r := range f.byClass("rect", "span") {
			if x := attrFloat(t, r, "x"); x < 90-1e-9 || x+attrFloat(t, r, "width") > 990+1+1e-9 {
				t.Errorf("device %s: span outside the plot: x=%g w=%s", f.Attr["data-device"], x, r.Attr["width"])
			}
		}
	}
	if kernels != res.Launches {
		t.Errorf("timeline: %d launches, generator wrote %d", kernels, res.Launches)
	}
	if copies < res.H2D+res.D2H {
		t.Errorf("timeline: %d copies, generator wrote %d H2D + %d D2H", copies, res.H2D, res.D2H)
	}

	// Copy bandwidth: a bar per direction and kind, labelled in GB/s or MB/s.
	mc := page.byClass("figure", "memcpy")
	if len(mc) != 1 {
		t.Fatalf("%d memcpy charts", len(mc))
	}
	for _, dir := range []string{"H2D", "D2H"} {
		found := false
		for _, r := range mc[0].byClass("g", "row") {
			if r.Attr["data-label"] == dir+" DMA" {
				found = true
				if v := attrFloat(t, r.byClass("rect", "bar")[0], "data-value"); v <= 0 || !strings.Contains(r.text(), fmtBW(v)) {
					t.Errorf("%s: bandwidth %g, label %q", dir, v, r.text())
				}
			}
		}
		if !found {
			t.Errorf("no %s DMA bar", dir)
		}
	}
	// Gaps and slowest launches, against the JSON of the same report.
	_, js, _ := runCLI(t, nil, "profile", "report", "run1="+path, "--view", "all", "-o", "json")
	var doc profileReportDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	gaps := page.byClass("figure", "gaps")
	if len(gaps) != len(doc.Reports[0].Gaps) {
		t.Fatalf("%d gap charts, %d devices with gaps", len(gaps), len(doc.Reports[0].Gaps))
	}
	for i, g := range doc.Reports[0].Gaps {
		n := 0.0
		for _, b := range gaps[i].byClass("rect", "bar") {
			n += attrFloat(t, b, "data-value")
		}
		if int(n) != g.Gaps || !strings.Contains(gaps[i].text(), fmt.Sprintf("%d gaps between %d kernels", g.Gaps, g.Kernels)) {
			t.Errorf("device %d: histogram counts %g gaps, report %d", g.Device, n, g.Gaps)
		}
	}
	slow := page.byClass("figure", "slowest")
	if len(slow) != 1 || len(slow[0].byClass("g", "row")) != len(doc.Reports[0].Slowest) {
		t.Fatalf("slowest chart: %v", slow)
	}
	for i, r := range slow[0].byClass("g", "row") {
		if v := attrFloat(t, r.byClass("rect", "bar")[0], "data-value"); v != float64(doc.Reports[0].Slowest[i].ExecNS) {
			t.Errorf("slowest %d: %g ns, JSON %d", i, v, doc.Reports[0].Slowest[i].ExecNS)
		}
	}

	// With explicit views, only those.
	_, out, _ = runCLI(t, nil, "profile", "report", path, "--view", "kernels", "-o", "html")
	page = parsePage(t, []byte(out))
	if len(page.byClass("figure", "timeline")) != 0 || len(page.byClass("figure", "kernels")) != 1 || !strings.Contains(out, "add --view streams") {
		t.Error("--view kernels: want the kernel chart only and a note on the timeline")
	}
}

// genTraceRes is genTraceDir that also returns what the generator wrote.
func genTraceRes(t *testing.T, root, name string, o profile.GenOptions) (profile.GenResult, string) {
	t.Helper()
	var buf bytes.Buffer
	res, err := profile.Generate(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, genTraceDir(t, root, name, o)
}

func TestHTMLProfileDiff(t *testing.T) {
	root := t.TempDir()
	base := genTraceDir(t, root, "base", profile.GenOptions{Ops: 300, Seed: 1})
	slow := genTraceDir(t, root, "slow", profile.GenOptions{Ops: 300, Seed: 1, FreqMHz: 800})
	code, out, _ := runCLI(t, nil, "profile", "diff", base, slow, "-o", "html")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a regression) with -o html too", code)
	}
	_, js, _ := runCLI(t, nil, "profile", "diff", base, slow, "-o", "json")
	var doc profileDiffDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, []byte(out))
	checkSelfContained(t, page, []byte(out))
	if v := page.byClass("p", "verdict"); len(v) != 1 || !strings.Contains(v[0].text(), "REGRESSION") {
		t.Errorf("verdict line: %v", v)
	}
	ch := page.byClass("figure", "diff")
	if len(ch) != 1 {
		t.Fatalf("%d diff charts", len(ch))
	}
	rows := ch[0].byClass("g", "row")
	if len(rows) != len(doc.Rows) {
		t.Fatalf("%d chart rows, JSON has %d", len(rows), len(doc.Rows))
	}
	for i, r := range rows {
		want := doc.Rows[i]
		if r.Attr["data-label"] != want.Name || r.Attr["data-verdict"] != string(want.Verdict) {
			t.Errorf("row %d: %s %s, JSON %s %s", i, r.Attr["data-label"], r.Attr["data-verdict"], want.Name, want.Verdict)
		}
		// The verdict's shape and word, not only a colour.
		if len(r.byClass("", "mark")) != 1 || !strings.Contains(r.text(), string(want.Verdict)) {
			t.Errorf("row %d: no mark or verdict word: %q", i, r.text())
		}
		if want.ChangePct != nil {
			bar := r.byClass("rect", "bar")
			if len(bar) != 1 || math.Abs(attrFloat(t, bar[0], "data-value")-*want.ChangePct) > 0.01 {
				t.Errorf("row %d: change bar %v, JSON %g", i, bar, *want.ChangePct)
			}
			// An 800 MHz run of the same cycles is 25% slower: the bar
			// goes right of the axis.
			if *want.ChangePct > 0 && attrFloat(t, bar[0], "x") < 260+210-1e-9 {
				t.Errorf("row %d: a slowdown drawn left of the axis", i)
			}
		}
		// Both medians' intervals as whiskers, relative to the base median:
		// the base's interval contains 0 (its own median).
		if want.Base != nil && want.New != nil {
			br, nr := r.byClass("path", "base-range"), r.byClass("path", "new-range")
			if len(br) != 1 || len(nr) != 1 {
				t.Fatalf("row %d: %d base and %d new intervals", i, len(br), len(nr))
			}
			if lo, hi := attrFloat(t, br[0], "data-low"), attrFloat(t, br[0], "data-high"); lo > 0.01 || hi < -0.01 {
				t.Errorf("row %d: base interval [%g, %g] %% misses the base median", i, lo, hi)
			}
			m := *want.Base.MedianExecNS
			if lo := attrFloat(t, nr[0], "data-low"); math.Abs(lo-100*(*want.New.MedianLowExecNS/m-1)) > 0.01 {
				t.Errorf("row %d: new interval low %g%%, JSON %g / %g", i, lo, *want.New.MedianLowExecNS, m)
			}
		}
	}
	tb := page.byClass("table", "diff")
	if len(tb) != 1 || len(tb[0].all(func(n *node) bool { return n.Name == "tr" })) != len(doc.Rows)+1 {
		t.Fatalf("diff table rows")
	}
	if !strings.Contains(tb[0].text(), "%]") {
		t.Error("diff table lacks the median intervals")
	}
}

func TestHTMLRunOp(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "-o", "html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, js, _ := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "-o", "json")
	var rep runner.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, []byte(out))
	checkSelfContained(t, page, []byte(out))
	n := len(rep.Results)
	if n == 0 {
		t.Fatal("no results")
	}
	if tot := page.byClass("span", "total"); len(tot) != 1 || tot[0].Text != strconv.Itoa(n)+"/"+strconv.Itoa(n)+" outputs passed" {
		t.Errorf("total: %v", tot)
	}
	ch := page.byClass("figure", "nmse")
	if len(ch) != 1 {
		t.Fatalf("%d NMSE charts", len(ch))
	}
	rows := ch[0].byClass("g", "row")
	if len(rows) != n {
		t.Fatalf("%d chart rows, %d results", len(rows), n)
	}
	for i, r := range rows {
		want := rep.Results[i]
		if r.Attr["data-status"] != string(want.Status) || r.Attr["data-label"] != want.Case+"/"+want.Node {
			t.Errorf("row %d: %v, want %s %s/%s", i, r.Attr, want.Status, want.Case, want.Node)
		}
		lim := r.byClass("line", "limit")
		if len(lim) != 1 || attrFloat(t, lim[0], "data-value") != want.MaxNMSE {
			t.Errorf("row %d: tolerance tick %v, want %g", i, lim, want.MaxNMSE)
		}
		if len(r.byClass("", "mark")) != 1 || !strings.Contains(r.text(), string(want.Status)) {
			t.Errorf("row %d: no mark or status word", i)
		}
	}
	if tb := page.byClass("table", "results"); len(tb) != 1 || len(tb[0].all(func(n *node) bool { return n.Name == "tr" })) != n+1 {
		t.Error("results table rows")
	}
	if len(page.byClass("figure", "perf")) != 0 {
		t.Error("a perf chart without --perf")
	}

	// --perf: a bar per timed launch at its median, whiskers from min to max.
	_, out, _ = runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--perf", "--perf-runs", "3", "--perf-time", "0", "-o", "html")
	page = parsePage(t, []byte(out))
	pf := page.byClass("figure", "perf")
	if len(pf) != 1 {
		t.Fatalf("%d perf charts", len(pf))
	}
	prow := pf[0].byClass("g", "row")
	if len(prow) == 0 || len(prow) != len(page.byClass("table", "perf")[0].all(func(n *node) bool { return n.Name == "tr" }))-1 {
		t.Fatalf("%d perf rows", len(prow))
	}
	for i, r := range prow {
		bar := r.byClass("rect", "bar")[0]
		x0, w := attrFloat(t, bar, "x"), attrFloat(t, bar, "width")
		d := strings.Fields(strings.NewReplacer("M", " ", "H", " ", ",", " ").Replace(r.byClass("path", "range")[0].Attr["d"]))
		lo, _ := strconv.ParseFloat(d[0], 64)
		hi, _ := strconv.ParseFloat(d[2], 64)
		if !(lo <= x0+w+0.01 && x0+w <= hi+0.01) || attrFloat(t, bar, "data-value") <= 0 {
			t.Errorf("perf %d: median end %g outside the range [%g, %g]", i, x0+w, lo, hi)
		}
	}
}

// TestHTMLNMSEScale checks the log axis on made-up results: a passing
// output left of its tolerance tick, a failing one right of it, one tick
// per decade, NaN at the right edge and 0 at the left.
func TestHTMLNMSEScale(t *testing.T) {
	rep := runner.Report{Schema: runner.ReportSchema, Backend: "sysemu", Device: "sysemu0", Numerics: "device", Results: []runner.Result{
		{Case: "a", Node: "pass", Status: "PASS", NMSE: 1e-9, MaxNMSE: 1e-7},
		{Case: "a", Node: "fail", Status: "FAIL", NMSE: 3e-3, MaxNMSE: 5e-4, Failure: "nmse"},
		{Case: "a", Node: "nan", Status: "FAIL", Failure: "nan", MaxNMSE: 1e-7},
		{Case: "a", Node: "zero", Status: "PASS", MaxNMSE: 1e-7},
		{Case: "a", Node: "skip", Status: "SKIP", Detail: "no host math"},
	}}
	var buf bytes.Buffer
	if err := render(&buf, "html", styles{}, document{Data: rep}); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, buf.Bytes())
	rows := page.byClass("figure", "nmse")[0].byClass("g", "row")
	x := func(r *node) float64 {
		m := r.byClass("", "mark")
		if len(m) != 1 {
			t.Fatalf("%s: %d marks", r.Attr["data-label"], len(m))
		}
		if m[0].Name == "circle" {
			return attrFloat(t, m[0], "cx")
		}
		d := strings.TrimPrefix(m[0].Attr["d"], "M")
		v, _ := strconv.ParseFloat(d[:strings.IndexByte(d, ',')], 64)
		return v
	}
	tick := func(r *node) float64 { return attrFloat(t, r.byClass("line", "limit")[0], "x1") }
	if !(x(rows[0]) < tick(rows[0])) {
		t.Error("passing output not left of its tolerance")
	}
	if !(x(rows[1]) > tick(rows[1])) {
		t.Error("failing output not right of its tolerance")
	}
	// Log scale: 1e-9 to 1e-7 is twice 1e-7 to 1e-6 (the pass's tick and
	// the NaN's row tick are both at 1e-7; the fail's tick at 5e-4).
	d1 := tick(rows[0]) - x(rows[0])    // 2 decades
	d2 := tick(rows[1]) - tick(rows[0]) // log10(5e-4/1e-7) decades
	if r := d2 / d1; math.Abs(r-math.Log10(5e-4/1e-7)/2) > 0.01 {
		t.Errorf("axis not logarithmic: ratio %g", r)
	}
	if !(x(rows[2]) > x(rows[1])) || !strings.Contains(rows[2].text(), "NaN") {
		t.Error("NaN not at the right edge")
	}
	if !(x(rows[3]) < x(rows[0])) {
		t.Error("0 not at the left edge")
	}
	if len(rows[4].byClass("", "mark")) != 0 || !strings.Contains(rows[4].text(), "SKIP") {
		t.Error("a SKIP has a mark or lacks its word")
	}
	if v := page.byClass("span", "status"); len(v) != 1 || !strings.Contains(v[0].Text, "FAIL") {
		t.Errorf("verdict %v", v)
	}
}

// TestHTMLNMSEChartBound checks that a run too large to chart whole
// charts every output that did not pass and says how many it drew.
func TestHTMLNMSEChartBound(t *testing.T) {
	rep := runner.Report{Schema: runner.ReportSchema, Backend: "ref", Device: "ref", Numerics: "reference"}
	for i := 0; i < maxNMSERows+500; i++ {
		st := "PASS"
		if i%1000 == 999 {
			st = "FAIL"
		}
		rep.Results = append(rep.Results, runner.Result{Case: "c", Node: "n" + strconv.Itoa(i), Status: verdict.Status(st), NMSE: 1e-9, MaxNMSE: 1e-7})
	}
	var buf bytes.Buffer
	if err := render(&buf, "html", styles{}, document{Data: rep}); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, buf.Bytes())
	rows := page.byClass("figure", "nmse")[0].byClass("g", "row")
	fails := 0
	for _, r := range rows {
		if r.Attr["data-status"] == "FAIL" {
			fails++
		}
	}
	if len(rows) != maxNMSERows || fails != 2 {
		t.Errorf("%d rows with %d FAIL, want %d with 2", len(rows), fails, maxNMSERows)
	}
	if !strings.Contains(buf.String(), fmt.Sprintf("%d of %d outputs drawn", maxNMSERows, len(rep.Results))) {
		t.Error("no note on the rows left out")
	}
	if tb := page.byClass("table", "results")[0]; len(tb.all(func(n *node) bool { return n.Name == "tr" })) != len(rep.Results)+1 {
		t.Error("the table lost rows")
	}
}

// TestHTMLEscapes feeds hostile strings through every page: markup,
// entities, quotes and control characters in kernel names, labels, paths,
// case names and details must come out as text.
func TestHTMLEscapes(t *testing.T) {
	evil := "<script>alert(1)</script>&amp;\"'\x1b[31m\x00</svg><b onload=x>"
	check := func(t *testing.T, page []byte) {
		t.Helper()
		root := parsePage(t, page)
		checkSelfContained(t, root, page)
		if bytes.Contains(page, []byte("<script")) || bytes.Contains(page, []byte("<b ")) || bytes.Contains(page, []byte("<i>")) || bytes.Contains(page, []byte{0x1b}) || bytes.Contains(page, []byte{0}) {
			t.Errorf("hostile markup or control bytes came through:\n%s", page)
		}
		// The text survives, as text.
		if !strings.Contains(root.text(), "<script>alert(1)</script>&amp;\"'\\x1b[31m\\x00</svg>") {
			t.Errorf("hostile string not shown as text")
		}
	}
	t.Run("profile report", func(t *testing.T) {
		dir := t.TempDir()
		trace, err := os.ReadFile("testdata/profile/et_runtime_trace.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "et_runtime_trace.json"), trace, 0o644); err != nil {
			t.Fatal(err)
		}
		km, _ := json.Marshal(map[string]int{evil: 0})
		if err := os.WriteFile(filepath.Join(dir, "kernel_id.json"), km, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, nil, "profile", "report", "<i>&amp;\"'\x1b="+filepath.Join(dir, "et_runtime_trace.json"), "-o", "html")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, []byte(out))
	})
	t.Run("profile diff", func(t *testing.T) {
		one := 10.0
		side := &profile.DiffSide{Count: 1, MedianExecCycles: 10, MedianExecNS: &one, MedianLowExecCycles: 10, MedianHighExecCycles: 10, MedianLowExecNS: &one, MedianHighExecNS: &one}
		d := profileDiffDoc{Schema: "et.profile-diff/v1", Base: profileDiffTrace{Label: evil, Path: evil}, New: profileDiffTrace{Label: "n"},
			ThresholdPct: 5, Alpha: 0.05, Unit: "ns", Notes: []string{evil},
			Rows: []profile.DiffRow{{Kind: "kernel", Name: evil, Base: side, New: side, Verdict: profile.VerdictSame, Reason: evil}}}
		var buf bytes.Buffer
		if err := render(&buf, "html", styles{}, document{Data: d}); err != nil {
			t.Fatal(err)
		}
		check(t, buf.Bytes())
	})
	t.Run("run-op", func(t *testing.T) {
		rep := runner.Report{Schema: runner.ReportSchema, Backend: evil, Device: evil, Numerics: "device",
			Results: []runner.Result{{Case: evil, Node: evil, Op: evil, Kernel: evil, Status: "FALLBACK", Detail: evil,
				Reasons: []plan.Reason{{Code: "x", Text: evil}}}},
			Perf:   []runner.Timing{{Case: evil, Kernel: evil, Runs: 1, MedNS: 5, MinNS: 4, MaxNS: 6, Clock: "device"}},
			Faults: []runner.Fault{{Case: evil, Step: evil, Errors: []driver.StreamError{{Code: evil, Message: evil}}}}}
		var buf bytes.Buffer
		if err := render(&buf, "html", styles{}, document{Data: rep}); err != nil {
			t.Fatal(err)
		}
		check(t, buf.Bytes())
	})
	t.Run("tables", func(t *testing.T) {
		var buf bytes.Buffer
		doc := document{Data: sampleDoc{Schema: "et.sample/v1"}, Tables: []table{{Title: evil, Headers: []string{evil}, Rows: [][]string{{evil}}, Notes: []string{evil}}}}
		if err := render(&buf, "html", styles{}, doc); err != nil {
			t.Fatal(err)
		}
		check(t, buf.Bytes())
	})
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/plan"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/profile"
	"github.com/ainekko/et/internal/runner"
)

// --- the flattening rules, on a sample row type ---

type csvInner struct {
	A int     `json:"a"`
	B *string `json:"b,omitempty"`
}

type csvEmbedded struct {
	E string `json:"e"`
}

type csvSample struct {
	csvEmbedded
	Name    string            `json:"name"`
	N       uint64            `json:"n"`
	I       int8              `json:"i"`
	F       float64           `json:"f"`
	F32     float32           `json:"f32"`
	OK      bool              `json:"ok,omitempty"`
	Opt     int               `json:"opt,omitempty"`
	Ptr     *int              `json:"ptr"`
	Inner   csvInner          `json:"inner"`
	PInner  *csvInner         `json:"p_inner,omitempty"`
	List    []string          `json:"list"`
	Ints    []int             `json:"ints,omitempty"`
	Skipped []csvInner        `json:"skipped"`
	Map     map[string]int    `json:"map"`
	Hidden  string            `json:"-"`
	Verdict profile.Verdict   `json:"verdict"`
	Ctx     *csvEmbedded      `json:"ctx"`
	Untag   string            // no tag: the Go name, as in JSON
	MapOnly map[string]string `json:"map_only,omitempty"`
}

func TestCSVFlattening(t *testing.T) {
	seven, s := 7, "x"
	rows := []csvSample{
		{csvEmbedded: csvEmbedded{E: "e1"}, Name: "a,b", N: 18446744073709551615, I: -3, F: 1e-7, F32: 0.1, OK: true, Opt: 0, Ptr: &seven,
			Inner: csvInner{A: 1, B: &s}, PInner: &csvInner{A: 2}, List: []string{"p", "q"}, Ints: []int{1, 2}, Verdict: "slower",
			Ctx: &csvEmbedded{E: "c"}, Untag: "u"},
		{Name: "", F: 1e21, F32: 3, Opt: 5, List: []string{}},
	}
	header, got, err := csvRecords(rows)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []string{"e", "name", "n", "i", "f", "f32", "ok", "opt", "ptr", "inner_a", "inner_b", "p_inner_a", "p_inner_b",
		"list", "ints", "verdict", "ctx_e", "Untag"}
	if !slices.Equal(header, wantHeader) {
		t.Errorf("header\n got %q\nwant %q", header, wantHeader)
	}
	want := [][]string{
		{"e1", "a,b", "18446744073709551615", "-3", "1e-07", "0.1", "true", "", "7", "1", "x", "2", "", "p;q", "1;2", "slower", "c", "u"},
		{"", "", "0", "0", "1e+21", "3", "false", "5", "", "0", "", "", "", "", "", "", "", ""},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("rows\n got %q\nwant %q", got, want)
	}

	// Column names must be unique and a table must have two columns (a
	// one-field record is a section line).
	type dup struct {
		Inner csvInner `json:"inner"`
		A     int      `json:"inner_a"`
	}
	if _, _, err := csvRecords([]dup{}); err == nil || !strings.Contains(err.Error(), `two columns named "inner_a"`) {
		t.Errorf("duplicate columns: err = %v", err)
	}
	type one struct {
		A int `json:"a"`
	}
	if _, _, err := csvRecords([]one{}); err == nil {
		t.Error("a one-column table was accepted")
	}
	if _, _, err := csvRecords(one{}); err == nil {
		t.Error("rows that are not a slice were accepted")
	}
	if err := writeRawCSV(&bytes.Buffer{}, struct{}{}); err == nil {
		t.Error("a document without a CSV form was written")
	}
}

// --- the structural test: every command's CSV against its JSON ---

// csvSection is one parsed table of a CSV output.
type csvSection struct {
	header []string
	rows   [][]string
}

// parseCSVOutput splits a command's CSV output into its tables: plain CSV
// gives one table named "", sections give one table per "# name" record.
func parseCSVOutput(t *testing.T, out string) (map[string]*csvSection, []string) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("invalid CSV: %v\n%s", err, out)
	}
	tables := map[string]*csvSection{}
	var order []string
	var cur *csvSection
	for i, rec := range recs {
		if len(rec) == 1 && strings.HasPrefix(rec[0], "# ") {
			name := strings.TrimPrefix(rec[0], "# ")
			if tables[name] != nil {
				t.Fatalf("table %q twice", name)
			}
			cur = &csvSection{}
			tables[name], order = cur, append(order, name)
			continue
		}
		if cur == nil {
			if i != 0 {
				t.Fatalf("record %d before any section", i)
			}
			cur = &csvSection{}
			tables[""], order = cur, append(order, "")
		}
		if cur.header == nil {
			cur.header = rec
			continue
		}
		if len(rec) != len(cur.header) {
			t.Fatalf("record %q has %d fields, header %d", rec, len(rec), len(cur.header))
		}
		cur.rows = append(cur.rows, rec)
	}
	if len(order) > 1 && tables[""] != nil {
		t.Fatal("plain CSV followed by sections")
	}
	return tables, order
}

// jsonFlatten flattens a JSON object by the documented rules, independently
// of the CSV writer: nested objects prefix their keys, lists of scalars are
// joined with ';', lists of objects and maps... are left out (maps are
// objects: the test's row builders drop those keys).
func jsonFlatten(obj map[string]any, prefix string, out map[string]any) {
	for k, v := range obj {
		switch x := v.(type) {
		case map[string]any:
			jsonFlatten(x, prefix+k+"_", out)
		case nil:
			// null: absent, like a nil pointer's columns
		case []any:
			items := []string{}
			scalar := true
			for _, e := range x {
				switch s := e.(type) {
				case string:
					items = append(items, s)
				case json.Number:
					items = append(items, s.String())
				case bool:
					items = append(items, strconv.FormatBool(s))
				default:
					scalar = false
				}
			}
			if scalar {
				out[prefix+k] = strings.Join(items, ";")
			}
		default:
			out[prefix+k] = v
		}
	}
}

// csvCellMatches compares a CSV cell with the JSON value of its column:
// strings and lists equal, numbers equal as numbers, booleans true/false,
// absent keys empty (or false: JSON omits false booleans).
func csvCellMatches(cell string, v any, present bool) bool {
	if !present || v == nil {
		return cell == "" || cell == "false"
	}
	switch x := v.(type) {
	case string:
		return cell == x
	case bool:
		return cell == strconv.FormatBool(x)
	case json.Number:
		if cell == x.String() {
			return true
		}
		if !strings.ContainsAny(cell+x.String(), ".eE") {
			return false // integers are written in decimal, digit for digit
		}
		a, err1 := strconv.ParseFloat(cell, 64)
		b, err2 := strconv.ParseFloat(x.String(), 64)
		return err1 == nil && err2 == nil && a == b
	}
	return false
}

// csvCheck is one command run: its -o json and -o csv outputs and, per
// table, the JSON objects its rows come from (parent keys merged in).
type csvCheck struct {
	command string // the command's section in docs/output-formats.md
	run     func(t *testing.T, format string) string
	rows    map[string]func(doc map[string]any) []map[string]any
	// volatile are measured columns, different in the JSON and the CSV
	// run: they are only checked to be numbers.
	volatile []string
}

func jsonList(v any) []map[string]any {
	var out []map[string]any
	for _, e := range asList(v) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// jsonChildren lists the objects of list key of each parent, with the
// parent's keys keep (renamed as given) merged in.
func jsonChildren(parents []map[string]any, key string, keep map[string]string) []map[string]any {
	var out []map[string]any
	for _, p := range parents {
		for _, c := range jsonList(p[key]) {
			m := map[string]any{}
			for from, to := range keep {
				if v, ok := p[from]; ok {
					m[to] = v
				}
			}
			for k, v := range c {
				m[k] = v
			}
			out = append(out, m)
		}
	}
	return out
}

// without copies objs without keys.
func without(objs []map[string]any, keys ...string) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = map[string]any{}
		for k, v := range o {
			if !slices.Contains(keys, k) {
				out[i][k] = v
			}
		}
	}
	return out
}

// jsonFaultRows lists stream errors one row per hart context, as the CSV
// faults tables do, with the parent's keys merged in.
func jsonFaultRows(parent map[string]any, errs any) []map[string]any {
	var out []map[string]any
	for _, e := range jsonList(errs) {
		ctxs := jsonList(e["contexts"])
		if len(ctxs) == 0 {
			ctxs = []map[string]any{nil}
		}
		for _, c := range ctxs {
			m := map[string]any{"code": e["code"]}
			if msg, ok := e["message"]; ok {
				m["message"] = msg
			}
			for k, v := range parent {
				m[k] = v
			}
			if c != nil {
				m["context"] = c
			}
			out = append(out, m)
		}
	}
	return out
}

// docCSVTables parses docs/output-formats.md: per command section ("## et
// devices"), its tables and their columns ("| `devices` | ... | `index`,
// `kind`, ... |").
func docCSVTables(t *testing.T) map[string]map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "output-formats.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	sectionRE := regexp.MustCompile("^## `(et [a-z -]+)`")
	rowRE := regexp.MustCompile("^\\| `([a-z_]+)` \\|.*\\| (`[^|]*`) \\|$")
	colRE := regexp.MustCompile("`([A-Za-z0-9_]+)`")
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		if m := sectionRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			out[cur] = map[string][]string{}
			continue
		}
		if m := rowRE.FindStringSubmatch(line); m != nil && cur != "" {
			var cols []string
			for _, c := range colRE.FindAllStringSubmatch(m[2], -1) {
				cols = append(cols, c[1])
			}
			out[cur][m[1]] = cols
		}
	}
	return out
}

func TestCSVMatchesJSONAndDocs(t *testing.T) {
	docs := docCSVTables(t)
	seen := map[string]map[string]bool{}
	for _, c := range csvChecks(t) {
		t.Run(c.command, func(t *testing.T) {
			jsonOut, csvOut := c.run(t, "json"), c.run(t, "csv")
			dec := json.NewDecoder(strings.NewReader(jsonOut))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("invalid JSON: %v\n%s", err, jsonOut)
			}
			if strings.Contains(csvOut, "\x1b[") {
				t.Error("ANSI escape in CSV")
			}
			tables, order := parseCSVOutput(t, csvOut)
			documented := docs[c.command]
			if documented == nil {
				t.Fatalf("docs/output-formats.md has no section for %s", c.command)
			}
			if seen[c.command] == nil {
				seen[c.command] = map[string]bool{}
			}
			for _, name := range order {
				tab := tables[name]
				docName := name
				if name == "" {
					if len(documented) != 1 {
						t.Fatalf("plain CSV, but %d tables documented", len(documented))
					}
					for n := range documented {
						docName = n
					}
				}
				seen[c.command][docName] = true
				if want := documented[docName]; !slices.Equal(tab.header, want) {
					t.Errorf("table %q: header differs from docs/output-formats.md\n got: `%s`\nwant: %q", docName, strings.Join(tab.header, "`, `"), want)
				}
				build := c.rows[docName]
				if build == nil {
					t.Errorf("table %q: the test does not know where its rows are in JSON", docName)
					continue
				}
				objs := build(doc)
				if len(objs) != len(tab.rows) {
					t.Errorf("table %q: %d rows, JSON has %d", docName, len(tab.rows), len(objs))
					continue
				}
				for i, obj := range objs {
					flat := map[string]any{}
					jsonFlatten(obj, "", flat)
					for j, col := range tab.header {
						v, ok := flat[col]
						if slices.Contains(c.volatile, col) {
							if _, err := strconv.ParseFloat(tab.rows[i][j], 64); err != nil && (ok || tab.rows[i][j] != "") {
								t.Errorf("table %q row %d column %q: %q is not a number", docName, i, col, tab.rows[i][j])
							}
						} else if !csvCellMatches(tab.rows[i][j], v, ok) {
							t.Errorf("table %q row %d column %q: CSV %q, JSON %v (present %t)", docName, i, col, tab.rows[i][j], v, ok)
						}
						delete(flat, col)
					}
					for k := range flat {
						t.Errorf("table %q row %d: JSON key %q has no column", docName, i, k)
					}
				}
			}
		})
	}
	for cmd, tables := range docs {
		for name := range tables {
			if !seen[cmd][name] {
				t.Errorf("docs/output-formats.md documents table %q of %s, which no run of this test wrote", name, cmd)
			}
		}
	}
}

// csvChecks are the runs of TestCSVMatchesJSONAndDocs; between them they
// write every documented table, most with rows.
func csvChecks(t *testing.T) []csvCheck {
	root := t.TempDir()
	trace := genTraceDir(t, root, "base", profile.GenOptions{Ops: 300, Seed: 1})
	fewer := genTraceDir(t, root, "fewer", profile.GenOptions{Ops: 300, Seed: 2, Kernels: 7})
	cli := func(args ...string) func(*testing.T, string) string {
		return func(t *testing.T, format string) string {
			_, out, errOut := runCLI(t, nil, append(args, "-o", format)...)
			if out == "" {
				t.Fatalf("%v -o %s: no output; stderr %s", args, format, errOut)
			}
			return out
		}
	}
	list := func(key string, drop ...string) func(map[string]any) []map[string]any {
		return func(d map[string]any) []map[string]any { return without(jsonList(d[key]), drop...) }
	}
	one := func(drop ...string) func(map[string]any) []map[string]any {
		return func(d map[string]any) []map[string]any {
			m := map[string]any{}
			for k, v := range d {
				if !slices.Contains(drop, k) {
					m[k] = v
				}
			}
			return []map[string]any{m}
		}
	}
	reports := func(key string, keep map[string]string) func(map[string]any) []map[string]any {
		return func(d map[string]any) []map[string]any {
			return jsonChildren(jsonList(d["reports"]), key, keep)
		}
	}
	label := map[string]string{"label": "report"}
	sysemu := newCheckSysemuFixture(t)
	sysemu.breakInstall(t)
	kernel := writeKernelFile(t, "rms_norm_f32")
	dump := filepath.Join(root, "x.bin")
	return []csvCheck{
		{command: "et devices", run: func(t *testing.T, format string) string {
			f, out, _ := testFactory(nil)
			f.Global.Output = format
			opts, clean := devicesTestOpts(t, f, devicesTestEnv{scenario: "two-devices", sysemu: "installed", nodes: twoDeviceNodes})
			opts.Probe = true
			if err := devicesRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			return clean(out.String())
		}, rows: map[string]func(map[string]any) []map[string]any{
			"devices": list("devices", "counters"),
			"counters": func(d map[string]any) []map[string]any {
				return jsonChildren(jsonList(d["devices"]), "counters", map[string]string{"index": "index", "bdf": "bdf"})
			},
		}},
		{command: "et check-sysemu", run: func(t *testing.T, format string) string {
			_, out, _ := sysemu.run(t, map[string]string{"ET_PLATFORM": "/opt/et"}, "check-sysemu", "--prefix", "et", "--kernels", "kernels", "--probe", "-o", format)
			return out
		}, rows: map[string]func(map[string]any) []map[string]any{"checks": list("checks")}},
		{command: "et ops list", run: cli("ops", "list"), rows: map[string]func(map[string]any) []map[string]any{
			"ops": list("ops", "kernels"),
			"kernels": func(d map[string]any) []map[string]any {
				return jsonChildren(jsonList(d["ops"]), "kernels", map[string]string{"op": "op"})
			},
			"sub_ops": list("sub_ops"),
			"fusions": list("fusions"),
		}},
		{command: "et ops explain", run: cli("ops", "explain", "-f", "../../testcases/llama_layer_small.yaml", "-f", "../../testcases/norm.yaml"),
			rows: map[string]func(map[string]any) []map[string]any{
				"nodes": list("nodes", "failures"),
				"failures": func(d map[string]any) []map[string]any {
					return jsonChildren(jsonList(d["nodes"]), "failures", map[string]string{"case": "case", "node": "node"})
				},
			}},
		{command: "et ops explain", run: cli("ops", "explain", "RMS_NORM(type=f32,ne=[100,4,1,1])"),
			rows: map[string]func(map[string]any) []map[string]any{
				"nodes": list("nodes", "failures"),
				"failures": func(d map[string]any) []map[string]any {
					return jsonChildren(jsonList(d["nodes"]), "failures", map[string]string{"case": "case", "node": "node"})
				},
			}},
		{command: "et profile report", run: cli("profile", "report", "a="+trace, "b="+fewer, "--view", "all", "--top", "3"), rows: map[string]func(map[string]any) []map[string]any{
			"summary": func(d map[string]any) []map[string]any {
				var out []map[string]any
				for _, r := range jsonList(d["reports"]) {
					m := map[string]any{"report": r["label"], "files": r["files"]}
					for k, v := range r["summary"].(map[string]any) {
						if k != "devices" {
							m[k] = v
						}
					}
					out = append(out, m)
				}
				return out
			},
			"devices": func(d map[string]any) []map[string]any {
				var out []map[string]any
				for _, r := range jsonList(d["reports"]) {
					for _, x := range jsonList(r["summary"].(map[string]any)["devices"]) {
						x["report"] = r["label"]
						out = append(out, x)
					}
				}
				return out
			},
			"warnings": reports("warnings", label),
			"kernels":  reports("kernels", label),
			"memcpy":   reports("memcpy", label),
			"gaps": func(d map[string]any) []map[string]any {
				return without(reports("gaps", label)(d), "histogram", "top")
			},
			"gap_histogram": func(d map[string]any) []map[string]any {
				return jsonChildren(reports("gaps", label)(d), "histogram", map[string]string{"report": "report", "device": "device"})
			},
			"top_gaps": func(d map[string]any) []map[string]any {
				return jsonChildren(reports("gaps", label)(d), "top", map[string]string{"report": "report", "device": "device"})
			},
			"stream_commands": func(d map[string]any) []map[string]any {
				return jsonChildren(reports("streams", label)(d), "commands", map[string]string{"report": "report", "device": "device", "stream": "stream"})
			},
			"slowest": reports("slowest", label),
		}},
		{command: "et profile report", run: cli("profile", "report", "testdata/profile/truncated.json", "--view", "summary"), rows: map[string]func(map[string]any) []map[string]any{
			"summary": func(d map[string]any) []map[string]any {
				r := jsonList(d["reports"])[0]
				m := map[string]any{"report": r["label"], "files": r["files"]}
				for k, v := range r["summary"].(map[string]any) {
					if k != "devices" {
						m[k] = v
					}
				}
				return []map[string]any{m}
			},
			"devices": func(d map[string]any) []map[string]any {
				r := jsonList(d["reports"])[0]
				out := jsonList(r["summary"].(map[string]any)["devices"])
				for _, x := range out {
					x["report"] = r["label"]
				}
				return out
			},
			"warnings": reports("warnings", label),
		}},
		{command: "et profile diff", run: cli("profile", "diff", trace, fewer), rows: map[string]func(map[string]any) []map[string]any{
			"diff": one("schema", "rows", "counts", "notes", "warnings"),
			"rows": list("rows"),
		}},
		{command: "et profile export", run: func(t *testing.T, format string) string {
			return cli("profile", "export", trace, "-O", filepath.Join(root, "export.json"))(t, format)
		}, rows: map[string]func(map[string]any) []map[string]any{
			"export":  one("schema", "devices", "warnings"),
			"devices": list("devices"),
		}},
		{command: "et run-kernel", run: func(t *testing.T, format string) string {
			out := cli("run-kernel", kernel, "--buf", "x=64:pattern", "--buf", "y=32", "--arg", "pad:680", "--arg", "u64:@y+8", "--dump", "x="+dump)(t, format)
			return strings.ReplaceAll(out, root, "$TMP")
		}, rows: map[string]func(map[string]any) []map[string]any{
			"run":     one("schema", "buffers", "args", "faults", "dumps", "warnings"),
			"buffers": list("buffers"),
			"args":    list("args"),
			"dumps": func(d map[string]any) []map[string]any {
				l := jsonList(d["dumps"])
				for _, x := range l {
					x["file"] = strings.ReplaceAll(x["file"].(string), root, "$TMP")
				}
				return l
			},
			"faults": func(d map[string]any) []map[string]any { return jsonFaultRows(nil, d["faults"]) },
		}, volatile: []string{"time_ns"}},
		{command: "et run-op", run: cli("run-op", "-f", "../../testcases/norm.yaml", "-f", "../../testcases/mul_mat.yaml", "--perf", "--perf-runs", "2", "--perf-warmup", "0", "--perf-time", "0"),
			rows: runOpCSVRows(), volatile: []string{"time_ns", "median_ns", "min_ns", "max_ns", "flops_per_s", "bytes_per_s",
				"wall_ns", "boot_ns", "inputs_ns", "upload_ns", "launch_ns", "perf_ns", "download_ns", "judge_ns", "other_ns", "total_ns"}},
		{command: "et run-op", run: func(t *testing.T, format string) string {
			// A fault the reference device cannot raise: the document by hand.
			var buf bytes.Buffer
			if err := render(&buf, format, styles{}, runOpDocument(runOpFaultReport(), styles{})); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}, rows: runOpCSVRows()},
		{command: "et version", run: cli("version"), rows: map[string]func(map[string]any) []map[string]any{"version": one("schema")}},
	}
}

func runOpCSVRows() map[string]func(map[string]any) []map[string]any {
	return map[string]func(map[string]any) []map[string]any{
		// Every other top-level key: a key added to the report must get
		// a column.
		"run": func(d map[string]any) []map[string]any {
			m := map[string]any{}
			for k, v := range d {
				if !slices.Contains([]string{"schema", "results", "perf", "launches", "phases", "baseline", "faults", "abi_mismatches"}, k) {
					m[k] = v
				}
			}
			return []map[string]any{m}
		},
		"launches": func(d map[string]any) []map[string]any { return jsonList(d["launches"]) },
		"baseline": func(d map[string]any) []map[string]any {
			if b, ok := d["baseline"].(map[string]any); ok {
				return jsonList(b["rows"])
			}
			return nil
		},
		"phases": func(d map[string]any) []map[string]any {
			if p, ok := d["phases"].(map[string]any); ok {
				return []map[string]any{p}
			}
			return nil
		},
		"results": func(d map[string]any) []map[string]any {
			var out []map[string]any
			for _, r := range jsonList(d["results"]) {
				m := maps.Clone(r)
				delete(m, "reasons") // the reasons table
				out = append(out, m)
			}
			return out
		},
		"reasons": func(d map[string]any) []map[string]any {
			return jsonChildren(jsonList(d["results"]), "reasons", map[string]string{"case": "case", "output": "output"})
		},
		"abi_mismatches": func(d map[string]any) []map[string]any {
			return jsonChildren(jsonList(d["abi_mismatches"]), "fields", map[string]string{"case": "case", "step": "step", "kernel": "kernel"})
		},
		"perf": func(d map[string]any) []map[string]any { return jsonList(d["perf"]) },
		"faults": func(d map[string]any) []map[string]any {
			var out []map[string]any
			for _, fl := range jsonList(d["faults"]) {
				out = append(out, jsonFaultRows(map[string]any{"case": fl["case"], "step": fl["step"]}, fl["errors"])...)
			}
			return out
		},
	}
}

// runOpFaultReport is a run stopped by kernel faults (one error with two
// hart contexts, one with unfilled registers, and one without contexts)
// and by a launch whose params decoded differently (two fields).
func runOpFaultReport() runner.Report {
	return runner.Report{Schema: runner.ReportSchema, Backend: "ref", Device: "reference device", Numerics: "reference", ABIChecked: 2,
		Results: []runner.Result{{Case: "c", Output: "out", Node: "out", Op: "add", Kernel: "el_map_f32", Status: "FAIL", NMSE: 0.25,
			Failure: "nmse", MaxNMSE: 5e-7, MaxAbsErr: 3.5, TimeNS: 1200, Reasons: []plan.Reason{{Code: plan.CodeType, Subject: "src0", Have: "q4_K", Want: "f32,f16", Text: "r1"}, {Code: plan.CodeCondition, Text: "r2"}}}},
		Faults: []runner.Fault{{Case: "c", Step: "el_map_f32 (out)", Errors: []driver.StreamError{
			{Code: "KernelLaunchException", Message: "hart fault", Contexts: []driver.ErrorContext{
				{Hart: 3, Cause: 5, EPC: 0x8005801000, TVal: 0xdeadbeef, Detail: "load access fault", Kind: "U-mode exception"},
				{Hart: 7, Kind: "kernel execution error", UserError: -2, HasUserError: true, Unfilled: "cause,epc,tval"},
			}},
			{Code: "CommandTimeout"},
		}}},
		ABIMismatches: []runner.ABIMismatch{{Case: "c", Step: "el_map_f32 (out)", Kernel: "el_map_f32", Fields: []abi.FieldDiff{
			{Field: "src0.ne[1]", Planned: "4", Decoded: "5"}, {Field: "dst.op", Planned: "2", Decoded: "3"}}}},
	}
}

// TestCSVRunOpFaults checks the faults table's rows beyond the generic
// comparison: one per hart context, an error without contexts on a row
// of its own.
func TestCSVRunOpFaults(t *testing.T) {
	var buf bytes.Buffer
	if err := render(&buf, "csv", styles{}, runOpDocument(runOpFaultReport(), styles{})); err != nil {
		t.Fatal(err)
	}
	tables, order := parseCSVOutput(t, buf.String())
	if !slices.Equal(order, []string{"run", "results", "reasons", "perf", "launches", "phases", "baseline", "faults", "abi_mismatches"}) {
		t.Fatalf("tables %q", order)
	}
	if n := len(tables["perf"].rows); n != 0 {
		t.Errorf("perf has %d rows without --perf", n)
	}
	f := tables["faults"]
	col := func(row int, name string) string { return f.rows[row][slices.Index(f.header, name)] }
	if len(f.rows) != 3 || col(0, "context_hart") != "3" || col(0, "context_epc") != "549848092672" || col(1, "context_user_error") != "-2" ||
		col(2, "code") != "CommandTimeout" || col(2, "context_hart") != "" {
		t.Errorf("faults:\n%s", buf.String())
	}
	if m := tables["abi_mismatches"]; len(m.rows) != 2 || !slices.Equal(m.rows[1], []string{"c", "el_map_f32 (out)", "el_map_f32", "dst.op", "2", "3"}) {
		t.Errorf("abi_mismatches:\n%s", buf.String())
	}
	if r := tables["run"]; !slices.Equal(r.rows[0], []string{"ref", "reference device", "reference", "2", "1", "0", "1", "0", "0", "0", "0"}) {
		t.Errorf("run:\n%s", buf.String())
	}
	if r := tables["reasons"]; len(r.rows) != 2 || !slices.Equal(r.rows[0], []string{"c", "out", "type", "src0", "q4_K", "f32,f16", "r1"}) ||
		r.rows[1][slices.Index(r.header, "code")] != "condition" {
		t.Errorf("reasons:\n%s", buf.String())
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

type sampleDoc struct {
	Schema string       `json:"schema"`
	Items  []sampleItem `json:"items"`
}

type sampleItem struct {
	Name      string  `json:"name"`
	SizeBytes uint64  `json:"size_bytes"`
	Ratio     float64 `json:"ratio"`
	OK        bool    `json:"ok"`
	Note      string  `json:"note,omitempty"`
}

func (d sampleDoc) csvTables() []csvTable {
	return []csvTable{{Name: "items", Rows: d.Items}, {Name: "empty", Rows: []sampleItem(nil)}}
}

func sampleDocument() document {
	d := sampleDoc{Schema: "et.sample/v1", Items: []sampleItem{
		{Name: "a|b", SizeBytes: 18446744073709551615, Ratio: 0.5, OK: true},
		{Name: "<c>", SizeBytes: 64, Ratio: 1e-7, Note: "x,y"},
	}}
	return document{Data: d, Tables: []table{
		{Title: "Items", Headers: []string{"name", "us/run", "GFLOP/s"}, Rows: [][]string{
			{"a|b", "18446744073709551615", "0.5"},
			{"<c>", "64", "1e-07"},
		}, Right: []int{1, 2}, Notes: []string{"2 items"}},
		{Title: "Second", Headers: []string{"k", "v"}, Rows: [][]string{{"x,y", "1"}}},
	}}
}

func TestRenderFormats(t *testing.T) {
	for _, format := range outputFormats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := render(&buf, format, styles{}, sampleDocument()); err != nil {
				t.Fatal(err)
			}
			assertGolden(t, "render_"+format, buf.Bytes())
			if bytes.Contains(buf.Bytes(), []byte("\x1b[")) {
				t.Error("ANSI escape in non-colour output")
			}
		})
	}
}

func TestRenderJSONKeepsUint64AndHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := render(&buf, "json", styles{}, sampleDocument()); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{`"size_bytes": 18446744073709551615`, `"name": "<c>"`, "\n  \"items\""} {
		if !strings.Contains(s, want) {
			t.Errorf("json lacks %q:\n%s", want, s)
		}
	}
	if !strings.HasSuffix(s, "}\n") {
		t.Error("json lacks trailing newline")
	}
}

func TestRenderYAMLKeepsOrderAndExactNumbers(t *testing.T) {
	var buf bytes.Buffer
	if err := render(&buf, "yaml", styles{}, sampleDocument()); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if !strings.HasPrefix(s, "schema: et.sample/v1\nitems:\n") {
		t.Errorf("yaml key order not kept:\n%s", s)
	}
	if !strings.Contains(s, "size_bytes: 18446744073709551615") {
		t.Errorf("yaml lost uint64 precision:\n%s", s)
	}
}

func TestTableHeadersKeptAsWritten(t *testing.T) {
	var buf bytes.Buffer
	if err := render(&buf, "table", styles{}, sampleDocument()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "us/run") || strings.Contains(buf.String(), "US / RUN") {
		t.Errorf("headers rewritten:\n%s", buf.String())
	}
}

func TestColorOnlyOnTTY(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		env  map[string]string
		want bool
	}{
		{"terminal", true, nil, true},
		{"pipe", false, nil, false},
		{"NO_COLOR=1", true, map[string]string{"NO_COLOR": "1"}, false},
		{"NO_COLOR=yes", true, map[string]string{"NO_COLOR": "yes"}, false},
		{"NO_COLOR empty", true, map[string]string{"NO_COLOR": ""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := colorEnabled(tt.tty, func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("colorEnabled = %v, want %v", got, tt.want)
			}
		})
	}
	io := newIOStreams(nil, &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" })
	if io.Color || io.OutTTY {
		t.Error("a buffer is not a terminal")
	}
	if got := newStyles(io).Status("fail"); got != "fail" {
		t.Errorf("styled without colour: %q", got)
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// TestRunOpCounts: an XFAIL, SKIP or FALLBACK output is not counted as
// passed, in every format (issue 34: one XFAIL among 8 outputs said
// "8/8 outputs passed").
func TestRunOpCounts(t *testing.T) {
	d := runner.Report{Schema: runner.ReportSchema, Backend: "ref", Device: "reference device", Numerics: "device"}
	add := func(s verdict.Status, n int) {
		for range n {
			d.Results = append(d.Results, runner.Result{Case: "c", Output: "o", Node: "o", Op: "add", Status: s})
		}
	}
	add(verdict.Pass, 5)
	add(verdict.XFail, 1)
	add(verdict.Skip, 1)
	add(verdict.Fallback, 1)
	want := map[string][]string{
		"table":    {"5/8 outputs passed, 1 expected failure, 1 fallback (ran on the host), 1 skipped on reference device (ref)"},
		"markdown": {"5/8 outputs passed, 1 expected failure, 1 fallback (ran on the host), 1 skipped on reference device (ref)"},
		"html":     {`<span class="total">5/8 outputs passed, 1 expected failure, 1 fallback (ran on the host), 1 skipped</span>`},
		"json":     {`"counts": {`, `"outputs": 8,`, `"pass": 5,`, `"fail": 0,`, `"fallback": 1,`, `"skip": 1,`, `"xfail": 1,`, `"xpass": 0`},
		"yaml":     {"counts:\n", "  outputs: 8\n", "  pass: 5\n", "  fallback: 1\n", "  skip: 1\n", "  xfail: 1\n"},
		"csv":      {"counts_outputs,counts_pass,counts_fail,counts_fallback,counts_skip,counts_xfail,counts_xpass\n", ",device,0,8,5,0,1,1,1,0\n"},
	}
	for format, subs := range want {
		var buf bytes.Buffer
		if err := render(&buf, format, styles{}, runOpDocument(d, styles{})); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, s := range subs {
			if !strings.Contains(buf.String(), s) {
				t.Errorf("-o %s lacks %q:\n%s", format, s, buf.String())
			}
		}
		if strings.Contains(buf.String(), "8/8") {
			t.Errorf("-o %s counts every output as passed:\n%s", format, buf.String())
		}
	}
	d.Results = d.Results[:0]
	add(verdict.Fail, 2)
	add(verdict.XPass, 1)
	if got := countsSummary(d.Count()); got != "0/3 outputs passed, 2 failed, 1 unexpected pass (XPASS)" {
		t.Errorf("summary %q", got)
	}
}

package main

import (
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/runner"
)

// countsSummary is run-op's count of outputs for people: "7/8 outputs
// passed, 1 expected failure". Only PASS counts as passed; each other
// status present is named with its count, so an XFAIL, SKIP or FALLBACK
// output is never counted as a pass.
func countsSummary(c runner.Counts) string {
	parts := []string{fmt.Sprintf("%d/%d outputs passed", c.Pass, c.Outputs)}
	for _, n := range []struct {
		n          int
		one, other string
	}{
		{c.Fail, "failed", "failed"},
		{c.XPass, "unexpected pass (XPASS)", "unexpected passes (XPASS)"},
		{c.XFail, "expected failure", "expected failures"},
		{c.Fallback, "fallback (ran on the host)", "fallbacks (ran on the host)"},
		{c.Skip, "skipped", "skipped"},
	} {
		switch {
		case n.n == 1:
			parts = append(parts, "1 "+n.one)
		case n.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.other))
		}
	}
	return strings.Join(parts, ", ")
}

// caseLabeler shortens the case names of a run's rows for people: when
// every case comes from one test file ("FILE:LINE OP NAME", as
// --test-file names them), rows show "LINE OP NAME" and note names FILE
// once, instead of repeating its path on every row.
func caseLabeler(results []runner.Result) (label func(string) string, note string) {
	label = func(s string) string { return s }
	if len(results) < 2 {
		return label, ""
	}
	file := ""
	for _, r := range results {
		sp := strings.IndexByte(r.Case, ' ')
		colon := strings.LastIndexByte(r.Case[:max(sp, 0)], ':')
		if sp < 0 || colon <= 0 || (file != "" && r.Case[:colon] != file) {
			return label, ""
		}
		file = r.Case[:colon]
	}
	return func(s string) string { return strings.TrimPrefix(s, file+":") }, "case: line, op and name in the test file " + file
}

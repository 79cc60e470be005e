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

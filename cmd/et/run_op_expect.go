package main

import (
	"fmt"

	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/expect"
)

// Statuses of outputs listed in an --expected-failures file.
const (
	// statusXFail is a listed output that failed, as expected: it does
	// not fail the run.
	statusXFail = "XFAIL"
	// statusXPass is a listed output that passed: the defect is gone (or
	// the list is wrong), and the run fails until the entry is removed.
	statusXPass = "XPASS"
)

// applyExpected turns the results that an expected-failures set lists
// into XFAIL (failed as expected) or XPASS (passed although listed), and
// returns a warning for each entry that applies to this run and names a
// case that ran but matched none of its outputs.
func applyExpected(set *expect.Set, run expect.Run, results []runOpResult) []string {
	if set == nil {
		return nil
	}
	matched := map[*expect.Entry]bool{}
	ran := map[string]bool{}
	for i := range results {
		r := &results[i]
		ran[r.Case] = true
		e := set.Match(run, r.Case, r.Output)
		if e == nil {
			continue
		}
		matched[e] = true
		r.Expected = e.Where()
		switch r.Status {
		case exec.StatusFail:
			r.Status = statusXFail
		case exec.StatusPass:
			r.Status = statusXPass
			r.Detail = fmt.Sprintf("listed as an expected failure at %s (%s; measured %s) but passed: remove the entry", e.Where(), e.Why, e.Measured)
		}
	}
	var warns []string
	for _, e := range set.Unused(run, ran, matched) {
		warns = append(warns, fmt.Sprintf("%s: expected failure %s/%s matches no output of case %s in this run", e.Where(), e.Case, e.Output, e.Case))
	}
	return warns
}

// failedStatus reports whether a result status fails the run.
func failedStatus(s string) bool { return s == exec.StatusFail || s == statusXPass }

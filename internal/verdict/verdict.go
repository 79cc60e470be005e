// Package verdict is the verdict on one output of a run: its typed status
// and the one function that decides it (Judge), from the comparisons with
// the reference math, the case's tolerances and the expected failures.
package verdict

import "fmt"

// Status is the verdict on one output.
type Status string

const (
	// Pass: within every limit.
	Pass Status = "PASS"
	// Fail: out of a limit (NMSE, a judged drift, max abs error).
	Fail Status = "FAIL"
	// Fallback: the node is unsupported by ggml-et and ran on the host
	// (reference math, like ggml's CPU fallback), within its limits.
	Fallback Status = "FALLBACK"
	// Skip: et cannot judge the output, having no host math for one of
	// its case's ops, variants or types (ops.NoHostMathError), as
	// test-backend-ops reports "not supported". It does not fail the run.
	Skip Status = "SKIP"
	// XFail: an output an expected-failures file lists that failed, as
	// expected: it does not fail the run.
	XFail Status = "XFAIL"
	// XPass: a listed output that passed: the defect is gone (or the list
	// is wrong), and the run fails until the entry is removed.
	XPass Status = "XPASS"
)

// Statuses are every status, in the order reports count them.
var Statuses = []Status{Pass, Fail, Fallback, Skip, XFail, XPass}

// Failed reports whether an output of this status fails the run: FAIL
// and XPASS.
func (s Status) Failed() bool { return s == Fail || s == XPass }

// Evidence is what an output's verdict is decided from.
type Evidence struct {
	// Skip is the reason et cannot judge the output ("" when it can).
	Skip string
	// Fallback: the node ran on the host.
	Fallback bool
	// NMSEFailure is the check of the comparison with the reference math
	// of the node on the device's own inputs that failed ("" when it is
	// within its limit: ops.Comparison.Failure), NMSEText its sentence.
	NMSEFailure, NMSEText string
	// DriftJudged: the case states a graph_nmse, so the drift (the
	// output against the reference chained from the leaves) is judged;
	// DriftFailure and DriftText are its comparison's, as for the NMSE.
	DriftJudged             bool
	DriftFailure, DriftText string
	// MaxAbs is the case's max_abs tolerance (nil: none) and MaxAbsErr
	// the output's largest absolute error.
	MaxAbs    *float64
	MaxAbsErr float64
	// Expected is the expected-failures entry that lists the output (nil:
	// none).
	Expected *Expected
}

// Expected is an expected-failures entry: where it is (file:line), why
// the output fails and what was measured.
type Expected struct {
	Where, Why, Measured string
}

// Verdict is an output's status, the check that failed and why.
type Verdict struct {
	Status Status
	// Failure is the check that failed: the NMSE comparison's ("nan",
	// "inf_mismatch", "nmse", ...) or "max_abs"; "" when none did, or
	// when only the drift did.
	Failure string
	// Detail says why: the failed comparison, the drift, the max abs
	// error, or the entry of an output that passed although listed.
	Detail string
}

// Judge decides an output's verdict, in this order: SKIP when it cannot
// be judged; then the NMSE of the node on the device's own inputs and the
// drift when judged (FAIL, else PASS or FALLBACK); then the case's
// max_abs, which fails a PASS; then an expected failure, which makes a
// FAIL XFAIL and a PASS XPASS (a FALLBACK or SKIP stays as it is).
func Judge(e Evidence) Verdict {
	if e.Skip != "" {
		return Verdict{Status: Skip, Detail: e.Skip}
	}
	v := Verdict{Status: Pass, Failure: e.NMSEFailure}
	if e.Fallback {
		v.Status = Fallback
	}
	driftFailed := e.DriftJudged && e.DriftFailure != ""
	switch {
	case e.NMSEFailure != "":
		v.Status, v.Detail = Fail, e.NMSEText
	case driftFailed:
		v.Status, v.Detail = Fail, "graph drift: "+e.DriftText
	}
	if e.MaxAbs != nil && v.Status == Pass && e.MaxAbsErr > *e.MaxAbs {
		v.Status, v.Failure, v.Detail = Fail, "max_abs", fmt.Sprintf("max abs error %g > %g", e.MaxAbsErr, *e.MaxAbs)
	}
	if x := e.Expected; x != nil {
		switch v.Status {
		case Fail:
			v.Status = XFail
		case Pass:
			v.Status = XPass
			v.Detail = fmt.Sprintf("listed as an expected failure at %s (%s; measured %s) but passed: remove the entry", x.Where, x.Why, x.Measured)
		}
	}
	return v
}

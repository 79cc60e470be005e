package runner

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/ainekko/et/internal/ops/plan"
	trace "github.com/ainekko/et/internal/profile"
	"github.com/ainekko/et/internal/verdict"
)

// JUnitSuites is the JUnit XML document (what JUnit marshals).
type JUnitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one case.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one output of a case.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

// JUnitSkipped marks a skipped output (XFAIL, SKIP).
type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnitFailure marks a failed output (FAIL, XPASS).
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit is the report as JUnit XML: one suite per case, one test per
// output; FAIL and XPASS are failures, XFAIL and SKIP skipped.
func JUnit(r *Report) ([]byte, error) {
	var suites JUnitSuites
	idx := map[string]int{}
	for _, x := range r.Results {
		i, ok := idx[x.Case]
		if !ok {
			i = len(suites.Suites)
			idx[x.Case] = i
			suites.Suites = append(suites.Suites, JUnitSuite{Name: x.Case})
		}
		s := &suites.Suites[i]
		jc := JUnitCase{Name: x.Node, Classname: "et.run-op." + x.Case, Time: fmt.Sprintf("%.6f", float64(x.TimeNS)/1e9)}
		switch x.Status {
		case verdict.Fail:
			jc.Failure = &JUnitFailure{Message: x.Detail, Text: fmt.Sprintf("op %s kernel %s: %s", x.Op, x.Kernel, x.Detail)}
			s.Failures++
		case verdict.XPass:
			jc.Failure = &JUnitFailure{Message: x.Detail, Text: x.Detail}
			s.Failures++
		case verdict.XFail:
			jc.Skipped = &JUnitSkipped{Message: fmt.Sprintf("expected failure (%s): %s", x.Expected, x.Detail)}
			s.Skipped++
		case verdict.Skip:
			jc.Skipped = &JUnitSkipped{Message: x.Detail}
			s.Skipped++
		case verdict.Fallback:
			jc.Output = "ran on the host (unsupported by ggml-et): " + plan.JoinTexts(x.Reasons) + "\n"
		}
		if x.Status != verdict.Skip {
			jc.Output += fmt.Sprintf("nmse %.3g (max %.3g), drift nmse %.3g", x.NMSE, x.MaxNMSE, x.DriftNMSE)
			if x.DriftMaxNMSE > 0 {
				jc.Output += fmt.Sprintf(" (max %.3g)", x.DriftMaxNMSE)
			}
		}
		s.Tests++
		s.Cases = append(s.Cases, jc)
	}
	if bl := r.Baseline; bl != nil {
		suites.Suites = append(suites.Suites, baselineSuite(bl))
	}
	b, err := xml.MarshalIndent(suites, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// baselineSuite is the comparison with a baseline as a JUnit suite: one
// test per launch segment, a failure per regression, the cycles before
// and after and the change in its output.
func baselineSuite(bl *Baseline) JUnitSuite {
	s := JUnitSuite{Name: "et.run-op.baseline " + bl.From}
	for _, row := range bl.Rows {
		change := "-"
		if row.ChangePct != nil {
			change = fmt.Sprintf("%+.2f%%", *row.ChangePct)
		}
		text := fmt.Sprintf("%s cycles %d -> %d (%s): %s, %s", row.Kernel, row.BaseCycles, row.NewCycles, change, row.Verdict, row.Reason)
		jc := JUnitCase{Name: row.Kernel + " (" + strings.Join(row.Nodes, ",") + ")", Classname: "et.run-op.baseline." + row.Case, Time: "0", Output: text}
		if row.Verdict == trace.VerdictSlower {
			jc.Failure = &JUnitFailure{Message: fmt.Sprintf("cycles %s, more than %g%%", change, bl.MaxRegressionPct), Text: text}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, jc)
	}
	return s
}

package verdict

import "testing"

// Judge applies the NMSE and the judged drift, then max_abs, then the
// expected failures, in that order.
func TestJudge(t *testing.T) {
	limit := 0.5
	x := &Expected{Where: "x.yaml:3", Why: "broken", Measured: "NMSE 1"}
	for _, tt := range []struct {
		name string
		e    Evidence
		want Verdict
	}{
		{"pass", Evidence{}, Verdict{Status: Pass}},
		{"fallback", Evidence{Fallback: true}, Verdict{Status: Fallback}},
		{"nmse", Evidence{Fallback: true, NMSEFailure: "nmse", NMSEText: "NMSE = 1 > 0.1"}, Verdict{Fail, "nmse", "NMSE = 1 > 0.1"}},
		{"drift not judged", Evidence{DriftFailure: "nmse", DriftText: "d"}, Verdict{Status: Pass}},
		{"drift", Evidence{DriftJudged: true, DriftFailure: "nmse", DriftText: "d"}, Verdict{Fail, "", "graph drift: d"}},
		{"nmse before drift", Evidence{NMSEFailure: "nan", NMSEText: "NaN", DriftJudged: true, DriftFailure: "nan", DriftText: "d"}, Verdict{Fail, "nan", "NaN"}},
		{"max abs", Evidence{MaxAbs: &limit, MaxAbsErr: 0.75}, Verdict{Fail, "max_abs", "max abs error 0.75 > 0.5"}},
		{"max abs within", Evidence{MaxAbs: &limit, MaxAbsErr: 0.5}, Verdict{Status: Pass}},
		{"max abs spares a fallback", Evidence{Fallback: true, MaxAbs: &limit, MaxAbsErr: 0.75}, Verdict{Status: Fallback}},
		{"xfail", Evidence{MaxAbs: &limit, MaxAbsErr: 0.75, Expected: x}, Verdict{XFail, "max_abs", "max abs error 0.75 > 0.5"}},
		{"xpass", Evidence{Expected: x}, Verdict{XPass, "", "listed as an expected failure at x.yaml:3 (broken; measured NMSE 1) but passed: remove the entry"}},
		{"listed fallback", Evidence{Fallback: true, Expected: x}, Verdict{Status: Fallback}},
		{"skip", Evidence{Skip: "no host math", Expected: x}, Verdict{Status: Skip, Detail: "no host math"}},
	} {
		if got := Judge(tt.e); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	for _, s := range Statuses {
		if s.Failed() != (s == Fail || s == XPass) {
			t.Errorf("%s.Failed() = %v", s, s.Failed())
		}
	}
}

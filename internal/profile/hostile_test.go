package profile

import (
	"bytes"
	"strings"
	"testing"
)

// Merging a trace with itself keeps each device's busy share: the spans
// of merged traces add up, as their exec cycles do.
func TestMergedBusy(t *testing.T) {
	b := readFixture(t, "sample.json")
	opts := ReportOptions{Views: []string{ViewSummary}, Device: -1}
	one, err := BuildReport([]Input{{File: "a", R: bytes.NewReader(b)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	two, err := BuildReport([]Input{{File: "a", R: bytes.NewReader(b)}, {File: "b", R: bytes.NewReader(b)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Summary.Devices) == 0 || len(two.Summary.Devices) != len(one.Summary.Devices) {
		t.Fatalf("devices %+v / %+v", one.Summary.Devices, two.Summary.Devices)
	}
	for i, d := range two.Summary.Devices {
		s := one.Summary.Devices[i]
		if d.BusyPercent != s.BusyPercent || d.BusyPercent > 100 || d.SpanCycles != 2*s.SpanCycles {
			t.Errorf("device %d merged: busy %.1f%% span %d; alone: busy %.1f%% span %d", d.ID, d.BusyPercent, d.SpanCycles, s.BusyPercent, s.SpanCycles)
		}
	}
}

func reportOf(t *testing.T, b []byte, opts ReportOptions) *Report {
	t.Helper()
	if opts.Views == nil {
		opts.Views = []string{ViewSummary, ViewKernels}
	}
	r, err := BuildReport([]Input{{File: "t.json", R: bytes.NewReader(b)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func warningKinds(r *Report) map[string]string {
	m := map[string]string{}
	for _, w := range r.Warnings {
		m[w.Kind] = w.Message
	}
	return m
}

func edit(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("fixture lacks %q", old)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

func TestHostileTraces(t *testing.T) {
	sample := readFixture(t, "sample.json")
	t.Run("no frequency", func(t *testing.T) {
		r := reportOf(t, edit(t, sample, `"frequency": 1000`, `"frequency": 0`), ReportOptions{Device: -1})
		if _, ok := warningKinds(r)["no_frequency"]; !ok {
			t.Errorf("no warning: %v", r.Warnings)
		}
		if len(r.Kernels) == 0 || r.Kernels[0].ExecPercent != 100 || r.Kernels[0].TotalExecCycles == 0 {
			t.Errorf("kernels %+v: want the cycles' share", r.Kernels)
		}
	})
	t.Run("cycles 2^64-1", func(t *testing.T) {
		r := reportOf(t, edit(t, sample, `"data": 1732655`, `"data": 18446744073709551615`), ReportOptions{Device: -1})
		if _, ok := warningKinds(r)["cycle-overflow"]; !ok {
			t.Errorf("no warning: %v", r.Warnings)
		}
		if r.Kernels[0].TotalExecCycles != 1<<64-1 || r.Kernels[0].TotalExecNS < 0 {
			t.Errorf("kernel %+v: wrapped", r.Kernels[0])
		}
		for _, d := range r.Summary.Devices {
			if d.ExecCycles != 1<<64-1 {
				t.Errorf("device %+v: wrapped", d)
			}
		}
	})
	t.Run("negative duration", func(t *testing.T) {
		r := reportOf(t, edit(t, sample, `"count": 1873`, `"count": -1873`), ReportOptions{Device: -1})
		if _, ok := warningKinds(r)["negative-duration"]; !ok {
			t.Errorf("no warning: %v", r.Warnings)
		}
	})
	t.Run("device 99", func(t *testing.T) {
		r := reportOf(t, sample, ReportOptions{Device: 99})
		if m := warningKinds(r)["no-such-device"]; !strings.Contains(m, "no device 99 (its devices: 0)") {
			t.Errorf("warnings %v", r.Warnings)
		}
	})
	t.Run("count 1e300", func(t *testing.T) {
		r := reportOf(t, edit(t, sample, `"count": 263745118438214`, `"count": 1e300`), ReportOptions{Device: -1})
		k := warningKinds(r)
		if _, ok := k["bad-time"]; !ok {
			t.Errorf("no bad-time warning: %v", r.Warnings)
		}
		if m, ok := k["missing-member"]; ok {
			t.Errorf("reported as missing: %s", m)
		}
	})
	t.Run("50 MB string", func(t *testing.T) {
		big := strings.Repeat("A", 50<<20)
		r := reportOf(t, edit(t, sample, `"class": "StartProfiling"`, `"class": "`+big+`"`), ReportOptions{Device: -1})
		if len(r.Warnings) == 0 {
			t.Fatal("no warning")
		}
		for _, w := range r.Warnings {
			if len(w.Message) > 2*maxWarning || len(w.Kind) > 2*maxWarningKind {
				t.Errorf("warning of %d bytes (kind %d bytes)", len(w.Message), len(w.Kind))
			}
		}
	})
}

// A trace "{}" and one whose StartProfiling is at a negative time stamp
// are warned of, not reported as if sound (issue 33).
func TestSuspectTraces(t *testing.T) {
	if r := reportOf(t, []byte("{}"), ReportOptions{Device: -1}); !strings.Contains(warningKinds(r)["no-events"], "t.json: no events") {
		t.Errorf("{}: warnings %v", r.Warnings)
	}
	if r := reportOf(t, nil, ReportOptions{Device: -1}); warningKinds(r)["no-events"] != "" {
		t.Errorf("an empty file is warned of once, as empty: %v", r.Warnings)
	}
	sample := readFixture(t, "sample.json")
	r := reportOf(t, edit(t, sample, `"count": 263745118400000`, `"count": -263745118400000`), ReportOptions{Device: -1})
	if !strings.Contains(warningKinds(r)["negative-start"], "event 0: StartProfiling at a negative time stamp") {
		t.Errorf("warnings %v", r.Warnings)
	}
	if k := warningKinds(reportOf(t, sample, ReportOptions{Device: -1})); k["negative-start"] != "" || k["no-events"] != "" {
		t.Errorf("sample: %v", k)
	}
}

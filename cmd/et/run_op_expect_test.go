package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// runExpected runs testcases/binary.yaml with an --expected-failures file
// on the reference device, corrupted (every output fails) or not.
func runExpected(t *testing.T, xf string, corrupt bool, extra func(*runOpOptions)) (error, runner.Report, string, string) {
	t.Helper()
	f, out, errOut := testFactory(nil)
	path := filepath.Join(t.TempDir(), "xfail.yaml")
	if err := os.WriteFile(path, []byte(xf), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, backendOptions: backendOptions{Backend: "ref"}, PerfRuns: 1,
		ExpectedFailures: path,
		OpenDevice: openWrapped(func(d driver.Device) driver.Device {
			if corrupt {
				return corruptDevice{d}
			}
			return d
		})}
	f.Global.Output = "json"
	if extra != nil {
		extra(opts)
	}
	err := runOpRun(context.Background(), f, opts)
	var doc runner.Report
	if opts.JUnit == "" || err == nil || exitCode(err) == 1 {
		if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
			t.Fatalf("json: %v\n%s", jerr, out)
		}
	}
	return err, doc, out.String(), errOut.String()
}

func statusOf(doc runner.Report) map[string]verdict.Status {
	m := map[string]verdict.Status{}
	for _, r := range doc.Results {
		m[r.Output] = r.Status
	}
	return m
}

func TestRunOpExpectedFailures(t *testing.T) {
	all := `expected_failures:
  - {case: binary, output: "*", measured: NMSE 1, why: the device is broken}
`
	t.Run("listed failures are XFAIL and exit 0", func(t *testing.T) {
		junit := filepath.Join(t.TempDir(), "r.xml")
		err, doc, _, _ := runExpected(t, all, true, func(o *runOpOptions) { o.JUnit = junit })
		if err != nil {
			t.Fatalf("err %v, want success", err)
		}
		for out, st := range statusOf(doc) {
			if st != verdict.XFail {
				t.Errorf("%s: status %s, want XFAIL", out, st)
			}
		}
		if doc.Results[0].Expected == "" || !strings.HasSuffix(doc.Results[0].Expected, "xfail.yaml:2") {
			t.Errorf("expected_failure = %q", doc.Results[0].Expected)
		}
		b, _ := os.ReadFile(junit)
		var suites runner.JUnitSuites
		if err := xml.Unmarshal(b, &suites); err != nil {
			t.Fatal(err)
		}
		if s := suites.Suites[0]; s.Failures != 0 || s.Skipped != 4 || s.Cases[0].Skipped == nil {
			t.Errorf("junit: %+v", s)
		}
	})
	t.Run("a listed output that passes is XPASS and exit 1", func(t *testing.T) {
		err, doc, _, _ := runExpected(t, `expected_failures:
  - {case: binary, output: sub_bc, measured: NMSE 1, why: was broken}
`, false, nil)
		if exitCode(err) != 1 {
			t.Fatalf("exit %d (%v), want 1", exitCode(err), err)
		}
		st := statusOf(doc)
		if st["sub_bc"] != verdict.XPass || st["add_row"] != "PASS" {
			t.Errorf("statuses %v", st)
		}
		for _, r := range doc.Results {
			if r.Output == "sub_bc" && !strings.Contains(r.Detail, "but passed: remove the entry") {
				t.Errorf("detail %q", r.Detail)
			}
		}
	})
	t.Run("an unlisted failure still fails", func(t *testing.T) {
		err, doc, _, _ := runExpected(t, `expected_failures:
  - {case: binary, output: sub_bc, measured: NMSE 1, why: broken}
`, true, nil)
		if exitCode(err) != 1 {
			t.Fatalf("exit %d, want 1", exitCode(err))
		}
		if st := statusOf(doc); st["sub_bc"] != verdict.XFail || st["add_row"] != "FAIL" {
			t.Errorf("statuses %v", st)
		}
	})
	t.Run("entries for another backend or uberkernel do not apply", func(t *testing.T) {
		err, doc, _, _ := runExpected(t, `expected_failures:
  - {case: binary, output: "*", backend: sysemu, measured: NMSE 1, why: broken}
  - {case: binary, output: add_row, uberkernel: true, measured: NMSE 1, why: broken}
`, true, nil)
		if exitCode(err) != 1 {
			t.Fatalf("exit %d, want 1", exitCode(err))
		}
		for out, st := range statusOf(doc) {
			if st != "FAIL" {
				t.Errorf("%s: %s, want FAIL", out, st)
			}
		}
	})
	t.Run("an entry that matches no output of a case that ran is warned about", func(t *testing.T) {
		_, _, _, errOut := runExpected(t, `expected_failures:
  - {case: binary, output: renamed, measured: NMSE 1, why: broken}
  - {case: other_case, output: x, measured: NMSE 1, why: not run here}
`, false, nil)
		if !strings.Contains(errOut, "xfail.yaml:2: expected failure binary/renamed matches no output of case binary") || strings.Contains(errOut, "other_case") {
			t.Errorf("stderr %q", errOut)
		}
	})
	t.Run("a bad file is an input error before anything runs", func(t *testing.T) {
		f, _, _ := testFactory(nil)
		path := filepath.Join(t.TempDir(), "bad.yaml")
		os.WriteFile(path, []byte("expected_failures:\n  - {case: a}\n"), 0o644)
		opened := false
		opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, backendOptions: backendOptions{Backend: "ref"}, PerfRuns: 1, ExpectedFailures: path,
			OpenDevice: func(ctx context.Context, s registry.Spec) (*registry.Handle, error) {
				opened = true
				return registry.Open(ctx, s)
			}}
		err := runOpRun(context.Background(), f, opts)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "bad.yaml:2: entry has no output") || opened {
			t.Errorf("exit %d, err %v, device opened %v", exitCode(err), err, opened)
		}
	})
}

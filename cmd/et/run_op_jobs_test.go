package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

// TestRunOpJobsSameResults runs seven case files with one job and with three
// (three reference devices, cases taken in parallel): the documents are
// the same, in input order, except for the timings and the device name.
func TestRunOpJobsSameResults(t *testing.T) {
	run := func(jobs string) runner.Report {
		t.Helper()
		args := []string{"run-op", "--jobs", jobs, "-o", "json"}
		for _, c := range []string{"binary", "norm", "mul_mat", "rope", "unary", "llama_layer_small", "views"} {
			args = append(args, "-f", "../../testcases/"+c+".yaml")
		}
		code, out, errOut := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("--jobs %s: exit %d: %s", jobs, code, errOut)
		}
		var d runner.Report
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		for i := range d.Results {
			d.Results[i].TimeNS = 0
		}
		return d
	}
	one, three := run("1"), run("3")
	if three.Device != "3 ref devices" || one.Device != "reference device" {
		t.Errorf("devices %q, %q", one.Device, three.Device)
	}
	if len(one.Results) == 0 || len(one.Results) != len(three.Results) {
		t.Fatalf("%d vs %d results", len(one.Results), len(three.Results))
	}
	for i := range one.Results {
		a, b := one.Results[i], three.Results[i]
		if a.Case != b.Case || a.Output != b.Output || a.Status != b.Status || a.NMSE != b.NMSE || a.MaxAbsErr != b.MaxAbsErr || a.Kernel != b.Kernel {
			t.Errorf("result %d: %+v with one job, %+v with three", i, a, b)
		}
	}
}

func TestRunOpJobsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--jobs", "0"}, "--jobs must be >= 1"},
		{[]string{"--jobs", "2", "--backend", "pcie"}, "a card runs one job at a time"},
		{[]string{"-j", "2", "--profile", t.TempDir()}, "--profile records one device"},
	} {
		code, _, errOut := runCLI(t, nil, append([]string{"run-op", "-f", "../../testcases/binary.yaml"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
	// More jobs than cases: one device per case, no idle device.
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "-j", "4")
	if code != 0 || !strings.Contains(out, "4/4 outputs passed on reference device") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

//go:build etrtfake && cgo && linux

package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// fakeNormInstall is a fake runtime install and a kernel folder with the
// kernels testcases/norm.yaml launches.
func fakeNormInstall(t *testing.T) (prefix, kernels string) {
	prefix, kernels = fakeInstall(t), t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "scale_f32")
	return prefix, kernels
}

// TestRunOpProfileSysemuFake: on sysemu, run-op --profile DIR starts the
// runtime's own profiler (here the fake shim's, which writes the runtime's
// format) and writes kernel_id.json from the KernelIds the loads returned;
// et profile report reads the pair back with every launch named.
func TestRunOpProfileSysemuFake(t *testing.T) {
	prefix, kernels := fakeNormInstall(t)
	dir := filepath.Join(t.TempDir(), "prof")
	code, out, errOut := runFake(t, "", "run-op", "-f", "../../testcases/norm.yaml", "--backend", "sysemu",
		"--prefix", prefix, "--kernels", kernels, "--profile", dir, "-o", "json")
	// The fake runtime runs no kernel, so the outputs are wrong (exit 1):
	// the trace is what is checked here.
	if code != 0 && code != exitNegative {
		t.Fatalf("run-op: exit %d, stderr %s", code, errOut)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("run-op stderr: %s", errOut)
	}
	var run runner.Report
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatalf("%v: %q (exit %d, stderr %s)", err, out, code, errOut)
	}
	want := map[string]int{} // each output of norm.yaml is its own launch
	for _, r := range run.Results {
		if r.Status != "FALLBACK" {
			want[r.Kernel]++
		}
	}
	if len(want) == 0 {
		t.Fatalf("no launches in the run: %s", out)
	}

	// kernel_id.json: the fake runtime's KernelIds, from 0, in load order.
	km, err := kernelmap.ReadFile(filepath.Join(dir, "kernel_id.json"))
	if err != nil {
		t.Fatal(err)
	}
	if km.Len() != len(want) {
		t.Errorf("kernel_id.json: %v, want the %d kernels %v", km, len(want), want)
	}
	for id := range km.Len() {
		if name, ok := km.Name(id); !ok || want[name] == 0 {
			t.Errorf("kernel_id.json: id %d is %q (%v)", id, name, ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "et_runtime_trace.json"+driver.PartialTraceSuffix)); !os.IsNotExist(err) {
		t.Errorf("partial trace left: %v", err)
	}

	code, out, errOut = runCLI(t, nil, "profile", "report", filepath.Join(dir, "et_runtime_trace.json"), "-o", "json")
	if code != 0 || errOut != "" {
		t.Fatalf("profile report: exit %d, stderr %q", code, errOut)
	}
	var rep profileReportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Reports) != 1 {
		t.Fatalf("report %v: %s", err, out)
	}
	r := rep.Reports[0]
	got := map[string]int{}
	for _, k := range r.Kernels {
		got[k.Name] += k.Launches
		if k.TotalExecCycles == 0 {
			t.Errorf("kernel %s: no device cycles", k.Name)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("report launches %v, run launched %v", got, want)
	}
	if r.Summary.Launches != len(run.Results)-countFallbacks(run) || r.Summary.IncompleteLaunches != 0 ||
		r.Summary.IncompleteCopies != 0 || r.Summary.Truncated {
		t.Errorf("summary: %+v", r.Summary)
	}
	if len(r.Summary.Devices) != 1 || r.Summary.Devices[0].FreqMHz != 1000 {
		t.Errorf("devices: %+v", r.Summary.Devices)
	}
	dirs := map[string]bool{}
	for _, m := range r.Memcpy {
		if m.Count > 0 && m.Bytes > 0 {
			dirs[m.Direction] = true
		}
	}
	if !dirs["H2D"] || !dirs["D2H"] {
		t.Errorf("memcpy rows: %+v", r.Memcpy)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("report warnings: %+v", r.Warnings)
	}
}

func countFallbacks(d runner.Report) int {
	n := 0
	for _, r := range d.Results {
		if r.Status == "FALLBACK" {
			n++
		}
	}
	return n
}

// TestRunOpProfileSysemuFakeCrash: when the runtime aborts, the error
// names the shim's message and the signal, and the truncated trace is
// left under its partial name, with a warning.
func TestRunOpProfileSysemuFakeCrash(t *testing.T) {
	prefix := fakeInstall(t)
	kernels := t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "scale_f32")
	dir := filepath.Join(t.TempDir(), "prof")
	code, out, errOut := runFake(t, "crash", "run-op", "-f", "../../testcases/norm.yaml", "--backend", "sysemu",
		"--prefix", prefix, "--kernels", kernels, "--profile", dir)
	if code != exitInternal || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	for _, want := range []string{
		"etrt worker died during launch (exit status 2): fake shim: scripted crash in kernelLaunch; SIGABRT: abort; logs in ",
		"--profile: the runtime's trace is incomplete (truncated): " + filepath.Join(dir, "et_runtime_trace.json.partial"),
		"et: worker output (last ",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "rip ") {
		t.Errorf("stderr shows the Go crash dump:\n%s", errOut)
	}
	for _, f := range []string{"et_runtime_trace.json", "kernel_id.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s written after a crash: %v", f, err)
		}
	}
}

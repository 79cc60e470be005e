//go:build etrtfake && cgo && linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

// TestRunOpPerfCyclesFake: run-op --perf on sysemu (the fake runtime, whose
// profiler gives a kernel launch 20000 exec cycles plus its params'
// size in bytes, at 1000 MHz)
// reports the device cycles of every timed run and of every launch of
// the judged run, in ns at the device clock, with the efficiency
// against the shires launched; with --profile DIR, from DIR's trace of
// the whole run.
func TestRunOpPerfCyclesFake(t *testing.T) {
	t.Run("per case", func(t *testing.T) { testPerfCyclesFake(t) })
	t.Run("profile", func(t *testing.T) { testPerfCyclesFake(t, "--profile", filepath.Join(t.TempDir(), "prof")) })
}

func testPerfCyclesFake(t *testing.T, extra ...string) {
	prefix, kernels := fakeNormInstall(t)
	code, out, errOut := runFake(t, "", append([]string{"run-op", "-f", "../../testcases/norm.yaml", "--backend", "sysemu",
		"--prefix", prefix, "--kernels", kernels, "--perf", "--perf-runs", "3", "--perf-warmup", "1", "--perf-time", "0", "-o", "json"}, extra...)...)
	if code != 0 && code != exitNegative { // the fake runs no kernel: wrong outputs
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s (%s)", err, out, errOut)
	}
	if len(doc.Perf) == 0 || len(doc.Launches) != len(doc.Perf) {
		t.Fatalf("perf %d rows, launches %d rows (stderr %s)", len(doc.Perf), len(doc.Launches), errOut)
	}
	fake := func(c uint64) bool { return c > 20000 && c < 20000+4096 }
	cycles := map[string]uint64{}
	for _, p := range doc.Perf {
		cycles[p.Kernel] = p.MedCycles
		if !fake(p.MedCycles) || p.MinCycles != p.MedCycles || p.MaxCycles != p.MedCycles || p.MedDeviceNS != int64(p.MedCycles) || p.FreqMHz != 1000 {
			t.Errorf("%s %s: cycles %d [%d, %d], %d ns at %d MHz; want 20000 + params, the same every run, 1 ns each at 1000 MHz",
				p.Case, p.Kernel, p.MedCycles, p.MinCycles, p.MaxCycles, p.MedDeviceNS, p.FreqMHz)
		}
		e := p.Efficiency
		if e == nil || p.Shires != 32 {
			t.Fatalf("%s: efficiency %+v on %d shires", p.Kernel, e, p.Shires)
		}
		// Independent arithmetic: bytes per cycle against the fake's
		// 128000 MB/s at 1000 MHz (128 bytes a cycle).
		if want := float64(p.Bytes) / float64(p.MedCycles) / 128 * 100; e.BytesPct < want*0.999 || e.BytesPct > want*1.001 {
			t.Errorf("%s: %g%% of the bandwidth, want %g", p.Kernel, e.BytesPct, want)
		}
		if e.PeakFlopsPerCycle != 16*32*32 {
			t.Errorf("%s: peak %g FLOP/cycle, want 16384 (32 shires)", p.Kernel, e.PeakFlopsPerCycle)
		}
	}
	for _, l := range doc.Launches {
		if l.ExecCycles != cycles[l.Kernel] || l.DeviceNS != int64(l.ExecCycles) || l.WallNS <= 0 || len(l.Nodes) == 0 {
			t.Errorf("launch %+v: want the cycles of its timed runs (%d) and a wall time", l, cycles[l.Kernel])
		}
	}
	if doc.Phases == nil || doc.Phases.BootNS <= 0 || doc.Phases.LaunchNS <= 0 || doc.Phases.PerfNS <= 0 {
		t.Errorf("phases %+v", doc.Phases)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("stderr: %s", errOut)
	}
}

// TestRunOpBaselineFake: --baseline compares each launch segment's cycles
// with an earlier run's report: the same cycles are "same", a baseline
// with fewer cycles makes the launch a regression, shown in the table,
// the JSON, Markdown and JUnit; --baseline-kernels runs the baseline in
// the same command.
func TestRunOpBaselineFake(t *testing.T) {
	prefix, kernels := fakeNormInstall(t)
	args := []string{"run-op", "-f", "../../testcases/norm.yaml", "--backend", "sysemu", "--prefix", prefix, "--kernels", kernels,
		"--perf", "--perf-runs", "2", "--perf-warmup", "0", "--perf-time", "0"}
	_, out, errOut := runFake(t, "", append(args, "-o", "json")...)
	var first runner.Report
	if err := json.Unmarshal([]byte(out), &first); err != nil || len(first.Perf) == 0 {
		t.Fatalf("%v: %s (%s)", err, out, errOut)
	}
	dir := t.TempDir()
	same := filepath.Join(dir, "same.json")
	writeFile(t, same, out)
	// A baseline whose first segment took 1% fewer cycles.
	first.Perf[0].MedCycles = first.Perf[0].MedCycles * 99 / 100
	b, _ := json.Marshal(first)
	faster := filepath.Join(dir, "faster.json")
	writeFile(t, faster, string(b))

	check := func(name string, extra []string, regressions int) {
		t.Helper()
		junit := filepath.Join(dir, name+".xml")
		_, out, errOut := runFake(t, "", append(append(args, extra...), "--max-regression", "0", "--junit", junit, "-o", "json")...)
		var doc runner.Report
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Baseline == nil {
			t.Fatalf("%s: %v: %s (%s)", name, err, out, errOut)
		}
		if doc.Baseline.Regressions != regressions || len(doc.Baseline.Rows) != len(doc.Perf) {
			t.Errorf("%s: %d regressions in %+v, want %d", name, doc.Baseline.Regressions, doc.Baseline.Rows, regressions)
		}
		x, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(x), `<failure message="cycles`); got != regressions {
			t.Errorf("%s: JUnit has %d regression failures, want %d:\n%s", name, got, regressions, x)
		}
	}
	check("same", []string{"--baseline", same}, 0)
	check("faster", []string{"--baseline", faster}, 1)
	check("kernels", []string{"--baseline-kernels", kernels}, 0)

	_, md, _ := runFake(t, "", append(args, "--baseline", faster, "--max-regression", "0", "-o", "markdown")...)
	if !strings.Contains(md, "Device cycles against the baseline") || !strings.Contains(md, "+1.0") || !strings.Contains(md, "slower") {
		t.Errorf("markdown shows no delta:\n%s", md)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

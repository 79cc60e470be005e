//go:build sysemu

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/runner"
)

// gateLines are the et lines of docs/ci.md's cycle regression gate (its
// ```sh block), with the stack's kernels for ../shared/et-stack/kernels,
// the repository's testcases/, and the redirect split off.
func gateLines(t *testing.T, kernels string) (lines [][]string, outs []string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## A cycle regression gate on the emulator")
	if !ok {
		t.Fatal("docs/ci.md has no cycle regression gate")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	block, _, _ := strings.Cut(rest, "```")
	tc, _ := filepath.Abs("../../testcases")
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		f := strings.Fields(line)
		if f[0] != "et" || len(f) < 3 || (f[len(f)-2] != ">" && f[len(f)-2] != ">>") {
			t.Fatalf("docs/ci.md gate line %q: want et ARGS > FILE", line)
		}
		args := f[1 : len(f)-2]
		for i, a := range args {
			args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "../shared/et-stack/kernels", kernels), "testcases/", tc+"/")
		}
		lines, outs = append(lines, args), append(outs, strings.Trim(f[len(f)-1], `"`))
	}
	if len(lines) != 2 {
		t.Fatalf("docs/ci.md gate: %d et lines, want 2", len(lines))
	}
	return lines, outs
}

// TestSysemuCIDocGate runs docs/ci.md's cycle regression gate on the real
// emulator: the baseline, then the gate against it (exit 0, every launch
// "same"), then the gate against a baseline with one cycle fewer on one
// launch (exit 1, that launch "slower", a JUnit failure).
func TestSysemuCIDocGate(t *testing.T) {
	s := needStack(t)
	lines, outs := gateLines(t, s.kernels)
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	r := s.et(t, 20*time.Minute, lines[0]...)
	if r.code != 0 || outs[0] != "baseline.json" {
		t.Fatalf("baseline: exit %d (%s), redirect %q", r.code, r.errOut, outs[0])
	}
	writeText(t, base, r.out)
	gate := func(baseline string) (etResult, string) {
		args := append([]string(nil), lines[1]...)
		for i, a := range args {
			switch a {
			case "baseline.json":
				args[i] = baseline
			case "gate.xml":
				args[i] = filepath.Join(dir, "gate.xml")
			}
		}
		r := s.et(t, 20*time.Minute, args...)
		x, _ := os.ReadFile(filepath.Join(dir, "gate.xml"))
		return r, string(x)
	}
	r, junit := gate(base)
	if r.code != 0 || !strings.Contains(r.out, "Device cycles against the baseline") || strings.Contains(r.out, "slower") {
		t.Errorf("gate against itself: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	if strings.Contains(junit, `failure message="cycles`) {
		t.Errorf("gate against itself: JUnit regression\n%s", junit)
	}

	var doc runner.Report
	if err := json.Unmarshal([]byte(readText(t, base)), &doc); err != nil || len(doc.Perf) == 0 || doc.Perf[0].MedCycles == 0 {
		t.Fatalf("baseline.json: %v %+v", err, doc.Perf)
	}
	doc.Perf[0].MedCycles--
	b, _ := json.Marshal(doc)
	fewer := filepath.Join(dir, "fewer.json")
	writeText(t, fewer, string(b))
	r, junit = gate(fewer)
	if r.code != 1 || !strings.Contains(r.out, "slower") || !strings.Contains(junit, `failure message="cycles`) {
		t.Errorf("gate against one cycle fewer: exit %d, want 1 with a slower launch\n%s\n%s\n%s", r.code, r.out, r.errOut, junit)
	}
}

func writeText(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

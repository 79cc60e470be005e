package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"

	"github.com/ainekko/et/internal/kernelmap"
)

// profileReportJSON is the part of `et profile report -o json` the round
// trip checks.
type profileReportJSON struct {
	Schema  string `json:"schema"`
	Reports []struct {
		Summary struct {
			Launches           int  `json:"launches"`
			IncompleteLaunches int  `json:"incomplete_launches"`
			IncompleteCopies   int  `json:"incomplete_copies"`
			Truncated          bool `json:"truncated"`
			Devices            []struct {
				FreqMHz uint32 `json:"frequency_mhz"`
			} `json:"devices"`
		} `json:"summary"`
		Kernels []struct {
			Name            string `json:"name"`
			Launches        int    `json:"launches"`
			TotalExecCycles uint64 `json:"total_exec_cycles"`
		} `json:"kernels"`
		Memcpy []struct {
			Direction string `json:"direction"`
			Count     int    `json:"count"`
			Bytes     uint64 `json:"total_bytes"`
		} `json:"memcpy"`
		Warnings []struct {
			Kind string `json:"kind"`
		} `json:"warnings"`
	} `json:"reports"`
}

// TestRunOpProfileRoundTrip: et run-op --profile DIR writes a trace and a
// kernel map that et profile report and et profile export read back with
// every launch accounted for and no warning.
func TestRunOpProfileRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra []string
		// wantWarn is the report warning expected, if any.
		wantWarn string
	}{
		{name: "direct"},
		{name: "uberkernel", extra: []string{"--uberkernel"}, wantWarn: "uberkernel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "prof")
			args := append([]string{"run-op", "-f", "../../testcases/norm.yaml", "--profile", dir, "-o", "json"}, tt.extra...)
			code, out, errOut := runCLI(t, nil, args...)
			if code != 0 || errOut != "" {
				t.Fatalf("run-op: exit %d, stderr %q", code, errOut)
			}
			var run runner.Report
			if err := json.Unmarshal([]byte(out), &run); err != nil {
				t.Fatal(err)
			}
			// In norm.yaml each output is computed by its own launch.
			want := map[string]int{}
			for _, r := range run.Results {
				if r.Status != "FALLBACK" {
					want[r.Kernel]++
				}
			}
			if tt.name == "uberkernel" {
				want = map[string]int{"uberkernel": 1}
			}
			if len(want) == 0 {
				t.Fatal("no launches in the run")
			}

			// kernel_id.json names every kernel loaded, ids from 0.
			km, err := kernelmap.ReadFile(filepath.Join(dir, "kernel_id.json"))
			if err != nil {
				t.Fatal(err)
			}
			for name := range want {
				found := false
				for _, n := range km.Names() {
					found = found || n == name
				}
				if !found {
					t.Errorf("kernel_id.json lacks %s: %v", name, km)
				}
			}
			if _, ok := km.Name(0); !ok {
				t.Errorf("kernel_id.json has no id 0: %v", km)
			}

			trace := filepath.Join(dir, "et_runtime_trace.json")
			code, out, errOut = runCLI(t, nil, "profile", "report", trace, "-o", "json")
			if code != 0 {
				t.Fatalf("profile report: exit %d, stderr %q", code, errOut)
			}
			var rep profileReportJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Schema != "et.profile-report/v1" || len(rep.Reports) != 1 {
				t.Fatalf("report: %s", out)
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
			if r.Summary.IncompleteLaunches != 0 || r.Summary.IncompleteCopies != 0 || r.Summary.Truncated {
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
			var kinds []string
			for _, w := range r.Warnings {
				kinds = append(kinds, w.Kind)
			}
			if strings.Join(kinds, ",") != tt.wantWarn {
				t.Errorf("report warnings %v, want %q (stderr %q)", kinds, tt.wantWarn, errOut)
			}
			if tt.wantWarn == "" && errOut != "" {
				t.Errorf("profile report stderr: %q", errOut)
			}

			chrome := filepath.Join(dir, "trace.perfetto.json")
			code, _, errOut = runCLI(t, nil, "profile", "export", trace, "-O", chrome, "-o", "json")
			if code != 0 {
				t.Fatalf("profile export: exit %d, stderr %q", code, errOut)
			}
			b, err := os.ReadFile(chrome)
			if err != nil {
				t.Fatal(err)
			}
			var ct struct {
				TraceEvents []json.RawMessage `json:"traceEvents"`
			}
			if err := json.Unmarshal(b, &ct); err != nil || len(ct.TraceEvents) == 0 {
				t.Errorf("export: %d events, %v", len(ct.TraceEvents), err)
			}
		})
	}
}

// TestRunOpProfileBadDir: a --profile path that cannot be a directory is
// a usage error, found before anything runs.
func TestRunOpProfileBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/norm.yaml", "--profile", filepath.Join(file, "prof"))
	if code != 2 || out != "" || !strings.Contains(errOut, "--profile") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

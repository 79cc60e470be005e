package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/profile"
)

// genTraceDir writes a generated trace and its kernel_id.json into a new
// directory under root and returns the trace path.
func genTraceDir(t *testing.T, root, name string, o profile.GenOptions) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	res, err := profile.Generate(&trace, o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "et_runtime_trace.json")
	if err := os.WriteFile(path, trace.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var km bytes.Buffer
	if err := kernelmap.Write(&km, res.Kernels); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel_id.json"), km.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewProfileDiffCmd(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a=b.json") // a real file whose name has "="
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, o *profileDiffOptions)
	}{
		{"defaults", []string{"x.json", "y.json"}, 0, func(t *testing.T, o *profileDiffOptions) {
			if o.Base != (diffInput{"base", "x.json", ""}) || o.New != (diffInput{"new", "y.json", ""}) {
				t.Errorf("inputs %+v %+v", o.Base, o.New)
			}
			if o.Threshold != 0.05 || o.Alpha != 0.05 || o.MinTime != 0 || o.FreqMHz != 0 {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{"labels and flags", []string{"main=x.json", "pr=y.json", "--threshold", "2.5%", "--alpha", "0.01", "--min-time", "1.5us",
			"--base-kernel-map", "bk.json", "--new-kernel-map", "nk.json", "--freq-mhz", "800"}, 0, func(t *testing.T, o *profileDiffOptions) {
			if o.Base != (diffInput{"main", "x.json", "bk.json"}) || o.New != (diffInput{"pr", "y.json", "nk.json"}) {
				t.Errorf("inputs %+v %+v", o.Base, o.New)
			}
			if o.Threshold != 0.025 || o.Alpha != 0.01 || o.MinTime != 1500*time.Nanosecond || o.FreqMHz != 800 {
				t.Errorf("flags: %+v", o)
			}
		}},
		{"threshold without percent sign", []string{"x", "y", "--threshold", "10"}, 0, func(t *testing.T, o *profileDiffOptions) {
			if o.Threshold != 0.1 {
				t.Errorf("threshold %v", o.Threshold)
			}
		}},
		{"existing file with =", []string{a, "y"}, 0, func(t *testing.T, o *profileDiffOptions) {
			if o.Base.Path != a || o.Base.Label != "base" {
				t.Errorf("base %+v", o.Base)
			}
		}},
		{"one argument", []string{"x"}, 2, nil},
		{"bad threshold", []string{"x", "y", "--threshold", "five"}, 2, nil},
		{"negative threshold", []string{"x", "y", "--threshold", "-1%"}, 2, nil},
		{"bad alpha", []string{"x", "y", "--alpha", "1.5"}, 2, nil},
		{"bad min-time", []string{"x", "y", "--min-time", "fast"}, 2, nil},
		{"two stdins", []string{"-", "-"}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errOut := testFactory(nil)
			var got *profileDiffOptions
			root := newRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "profile" {
					for _, s := range c.Commands() {
						if s.Name() == "diff" {
							c.RemoveCommand(s)
						}
					}
					c.AddCommand(newProfileDiffCmd(f, func(_ context.Context, o *profileDiffOptions) error { got = o; return nil }))
				}
			}
			root.SetArgs(append([]string{"profile", "diff"}, tt.args...))
			_, err := root.ExecuteC()
			code := exitCode(err)
			if !f.started && code == exitInternal {
				code = exitUsage // as execute does for cobra's argument errors
			}
			if code != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d; stderr %s", code, err, tt.wantCode, errOut)
			}
			if tt.check != nil {
				if got == nil {
					t.Fatal("run function not called")
				}
				tt.check(t, got)
			}
		})
	}
}

func TestProfileDiffRun(t *testing.T) {
	root := t.TempDir()
	base := genTraceDir(t, root, "base", profile.GenOptions{Ops: 500, Seed: 1})
	// Same generator, other seeds: every kernel's exec time is drawn from
	// the same distribution. Each row can still be a false alarm with a
	// small probability (p < alpha and a median moved by more than the
	// threshold, about 1% per row here): seed 2 has one (cont_f32,
	// +5.3%, p = 0.029), which the Holm correction over the 10 rows (or
	// --alpha 0.01) silences; --no-correction shows it.
	noise := genTraceDir(t, root, "noise", profile.GenOptions{Ops: 500, Seed: 3})
	unlucky := genTraceDir(t, root, "unlucky", profile.GenOptions{Ops: 500, Seed: 2})
	// Same device cycles at a lower clock: every kernel and copy takes
	// 25% longer in ns. A real slowdown.
	slow := genTraceDir(t, root, "slow", profile.GenOptions{Ops: 500, Seed: 1, FreqMHz: 800})
	fewer := genTraceDir(t, root, "fewer", profile.GenOptions{Ops: 500, Seed: 1, Kernels: 7})
	bad := filepath.Join(root, "bad.json")
	os.WriteFile(bad, []byte(`{"value0": [}`), 0o644)
	clean := func(s string) string { return strings.ReplaceAll(s, root, "$TMP") }

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		golden     string
		wantStdout []string
		wantStderr string
	}{
		{"noise", []string{base, noise}, 0, "profile_diff_noise", nil, ""},
		{"unlucky noise", []string{base, unlucky}, 0, "", []string{"10 same", "not significant after the Holm-Bonferroni correction"}, ""},
		{"unlucky noise without correction", []string{base, unlucky, "--no-correction"}, 1, "", []string{"1 slower, 9 same"}, ""},
		{"unlucky noise at alpha 0.01", []string{base, unlucky, "--alpha", "0.01"}, 0, "", []string{"10 same"}, ""},
		{"slowdown", []string{"main=" + base, "pr=" + slow}, 1, "profile_diff_slow", nil, ""},
		{"slowdown under a huge threshold", []string{base, slow, "--threshold", "50%"}, 0, "", []string{"10 same"}, ""},
		{"speedup is not a regression", []string{slow, base}, 0, "", []string{"8 faster, 2 same"}, ""},
		{"gone kernel", []string{base, fewer, "-o", "csv"}, 0, "", []string{"\nkernel,cpy_f32_f16,48,", ",gone,only in base\n"}, ""},
		{"new kernel", []string{fewer, base, "-o", "csv"}, 0, "", []string{"\nkernel,cpy_f32_f16,,,,,,,,,,,,,48,", ",new,only in new\n"}, ""},
		{"malformed trace", []string{base, bad}, 2, "", nil, "et: parsing trace: "},
		{"missing trace", []string{base, filepath.Join(root, "nope.json")}, 2, "", nil, "et: open trace "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, append([]string{"profile", "diff"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			if tt.golden != "" {
				assertGolden(t, tt.golden, []byte(clean(out)))
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if tt.wantStderr == "" && errOut != "" {
				t.Errorf("unexpected stderr: %s", errOut)
			}
			if tt.wantStderr != "" && !strings.HasPrefix(errOut, tt.wantStderr) {
				t.Errorf("stderr %q, want prefix %q", errOut, tt.wantStderr)
			}
		})
	}
}

func TestProfileDiffJSON(t *testing.T) {
	root := t.TempDir()
	base := genTraceDir(t, root, "base", profile.GenOptions{Ops: 300, Seed: 1})
	slow := genTraceDir(t, root, "slow", profile.GenOptions{Ops: 300, Seed: 1, FreqMHz: 800})
	code, out, errOut := runCLI(t, nil, "profile", "diff", base, slow, "--min-time", "1us", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// Pin the key set: adding keys is fine, renaming or removing needs a
	// new schema version.
	wantKeys := "alpha base counts min_time_ns new notes regression rows schema threshold_pct unit warnings"
	if got := strings.Join(diffKeys(doc), " "); got != wantKeys {
		t.Errorf("keys = %s, want %s", got, wantKeys)
	}
	if doc["schema"] != "et.profile-diff/v1" || doc["regression"] != true || doc["unit"] != "ns" || doc["min_time_ns"] != 1000.0 || doc["threshold_pct"] != 5.0 {
		t.Errorf("header: %v", doc)
	}
	rows := doc["rows"].([]any)
	row := rows[0].(map[string]any)
	if got := strings.Join(diffKeys(row), " "); got != "base change_pct kind name new p_value reason verdict" {
		t.Errorf("row keys = %s", got)
	}
	side := row["base"].(map[string]any)
	if got := strings.Join(diffKeys(side), " "); got != "count mean_exec_cycles mean_exec_ns median_exec_cycles median_exec_ns median_high_exec_cycles median_high_exec_ns median_interval_pct median_low_exec_cycles median_low_exec_ns total_exec_cycles total_exec_ns" {
		t.Errorf("side keys = %s", got)
	}
	if row["verdict"] != "slower" || row["kind"] != "kernel" {
		t.Errorf("first row: %v", row)
	}
	tr := doc["base"].(map[string]any)
	if got := strings.Join(diffKeys(tr), " "); got != "copies events incomplete kernel_map label launches path truncated" {
		t.Errorf("trace keys = %s", got)
	}
	if tr["kernel_map"] != "kernel_id.json" {
		t.Errorf("kernel map beside the trace not used: %v", tr)
	}
}

func diffKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

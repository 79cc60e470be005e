package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

const llamaTestFile = "../../testcases/test-files/llama_layer_small.txt"

// TestRunOpTestFile: every line of the committed test file runs on the
// reference device and passes against the reference math.
func TestRunOpTestFile(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "run-op", "--test-file", llamaTestFile, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(llamaTestFile)
	lines := strings.Count(string(b), "\n")
	if len(doc.Results) != lines {
		t.Fatalf("%d outputs, want one per line (%d)", len(doc.Results), lines)
	}
	for _, r := range doc.Results {
		if r.Status != "PASS" {
			t.Errorf("%s/%s: %s %s", r.Case, r.Output, r.Status, r.Detail)
		}
	}
}

func TestTestFileFilters(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--op", "MUL_MAT"}, 7},
		{[]string{"--op", "mul_mat,SILU"}, 8},
		{[]string{"--op", "SWIGLU"}, 1},
		{[]string{"--op", "MUL_MAT", "-p", `q8_0\[256,1000`}, 1},
		{[]string{"--params", `name=cache_._l0`}, 2},
		{[]string{"--op", "SOFT_MAX(type=f32,ne=[32,8,4,1])"}, 0},
	} {
		args := append([]string{"ops", "explain", "--test-file", llamaTestFile, "-o", "json"}, tc.args...)
		code, out, errOut := runCLI(t, nil, args...)
		if tc.want == 0 {
			if code != 2 || !strings.Contains(errOut, "no case matches") {
				t.Errorf("%v: exit %d, stderr %q; want 2 and no case matches", tc.args, code, errOut)
			}
			continue
		}
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", tc.args, code, errOut)
			continue
		}
		var doc opsExplainDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		cases := map[string]bool{}
		for _, n := range doc.Nodes {
			cases[n.Case] = true
		}
		if len(cases) != tc.want {
			t.Errorf("%v: %d cases, want %d: %v", tc.args, len(cases), tc.want, cases)
		}
	}
}

// TestTestFileFullCaseStringFilter: --op with a case's full string (as
// test-backend-ops prints it) selects exactly that line.
func TestTestFileFullCaseStringFilter(t *testing.T) {
	full := "SOFT_MAX(name=kq_soft_max-0,type=f32,ne=[32,8,4,1],op_params=[0:1040187392],sources=f32[32,8,4,1],f32[32,8,1,1])"
	code, out, errOut := runCLI(t, nil, "ops", "explain", "--test-file", llamaTestFile, "--op", "MUL,"+full, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc opsExplainDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, n := range doc.Nodes {
		got[n.Op] = true
	}
	if len(got) != 2 || !got["soft_max"] || !got["mul"] {
		t.Errorf("ops %v, want mul and soft_max", got)
	}
}

// TestTestFileBadLines: a bad line is reported as file:line and exits 2;
// the good lines still run.
func TestTestFileBadLines(t *testing.T) {
	b, err := os.ReadFile(llamaTestFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	bad := lines[0] + "9999 0 1 1 1 1 0 0 -\n" + lines[1]
	path := filepath.Join(t.TempDir(), "ops.txt")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, nil, "run-op", "--test-file", path, "-o", "json")
	if code != 2 || !strings.Contains(errOut, path+":2: op9999: op 9999 is not a ggml op") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2 {
		t.Errorf("%d outputs, want the 2 good lines", len(doc.Results))
	}
	code, _, errOut = runCLI(t, nil, "run-op", "--test-file", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "is a directory") {
		t.Errorf("a directory: exit %d, %q", code, errOut)
	}
}

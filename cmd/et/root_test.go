package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"silent", errSilent, 1},
		{"negative", negativef("3 checks failed"), 1},
		{"usage", usageErrorf("bad flag"), 2},
		{"wrapped usage", fmt.Errorf("x: %w", usageErrorf("bad")), 2},
		{"input", fmt.Errorf("load: %w", testInputError{}), 2},
		{"unavailable", fmt.Errorf("open: %w", driver.ErrNotBuilt), 3},
		{"busy", driver.ErrDeviceBusy, 3},
		{"timeout", fmt.Errorf("sync: %w", driver.ErrTimeout), 4},
		{"deadline", context.DeadlineExceeded, 4},
		{"canceled", context.Canceled, 130},
		{"plain", errors.New("boom"), 5},
		{"io", ioErrorf("write x: no space left on device"), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

type testInputError struct{}

func (testInputError) Error() string { return "case.yaml:3: unknown key" }
func (testInputError) InputError()   {}

func TestRootUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown command", []string{"bogus"}, `et: unknown command "bogus" for "et"`},
		{"unknown flag", []string{"version", "--bogus"}, "et: unknown flag: --bogus"},
		{"bad output", []string{"version", "-o", "xml"}, `et: invalid output format "xml"`},
		{"extra args", []string{"version", "x"}, `et: unexpected argument "x": et version takes no arguments`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			first := strings.SplitN(errOut, "\n", 2)[0]
			if !strings.HasPrefix(first, tt.wantErr) {
				t.Errorf("stderr first line %q, want prefix %q", first, tt.wantErr)
			}
			if !strings.Contains(errOut, "--help' for usage") {
				t.Errorf("usage hint missing: %q", errOut)
			}
		})
	}
}

// TestUsageErrorLines: a mistyped command is one error line, then the
// suggestion on a line of its own, then the --help pointer (cobra's
// multi-line error once came out folded into one line with "; "); an
// argument to a command that takes none is an unexpected argument, not an
// unknown command.
func TestUsageErrorLines(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run-ops"}, "et: unknown command \"run-ops\" for \"et\"\nDid you mean \"et run-op\"?\nRun 'et --help' for usage.\n"},
		{[]string{"bogus"}, "et: unknown command \"bogus\" for \"et\"\nRun 'et --help' for usage.\n"},
		{[]string{"profile", "reprot"}, "et: unknown command \"reprot\" for \"et profile\"\nDid you mean \"et profile report\"?\nRun 'et profile --help' for usage.\n"},
		{[]string{"devices", "extra"}, "et: unexpected argument \"extra\": et devices takes no arguments\nRun 'et devices --help' for usage.\n"},
		{[]string{"ops", "list", "x"}, "et: unexpected argument \"x\": et ops list takes no arguments\nRun 'et ops list --help' for usage.\n"},
	} {
		code, out, errOut := runCLI(t, nil, c.args...)
		if code != exitUsage || out != "" || errOut != c.want {
			t.Errorf("et %s: exit %d, stdout %q, stderr\n%s\nwant\n%s", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

func TestHelpListsExitCodes(t *testing.T) {
	code, out, _ := runCLI(t, nil, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Exit codes:", "130", "-o, --output"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestVersionFormats(t *testing.T) {
	for _, format := range outputFormats {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "version", "-o", format)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, version) {
				t.Errorf("output lacks the version: %q", out)
			}
		})
	}
	_, out, _ := runCLI(t, nil, "version", "-o", "json")
	if !strings.Contains(out, `"schema": "et.version/v1"`) {
		t.Errorf("json lacks schema: %s", out)
	}
}

// TestVersionBuildInfo: et version names the commit (Go's vcs.revision and
// vcs.modified), the ggml version of the built-in ABI manifest and whether
// the ET runtime is built in; JSON carries the same keys.
func TestVersionBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	d := newVersionDoc(bi)
	m := abi.Default()
	if d.Commit != "0123456789abcdef" || !d.Modified || d.GGMLCommit != m.GGMLCommit() || d.GGML != m.GGMLDescribe() || d.GGMLCommit == "" ||
		d.Etrt != (registry.Available("sysemu") == nil) {
		t.Errorf("doc %+v", d)
	}
	text := versionText(d)
	for _, want := range []string{"commit: 0123456789abcdef (modified)\n", "ggml:   " + m.GGMLDescribe() + ", the built-in ABI manifest\n        (" + m.GGMLCommit() + ")\n", "etrt:   "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	noVCS := versionText(newVersionDoc(nil))
	if !strings.Contains(noVCS, "commit: unknown (no VCS stamping") {
		t.Errorf("no build info:\n%s", noVCS)
	}
	// Every line fits an 80-column terminal.
	for _, line := range strings.Split(text+noVCS, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("%d columns: %q", len([]rune(line)), line)
		}
	}
	_, out, _ := runCLI(t, nil, "version", "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, "version", doc, "commit", "etrt", "ggml", "ggml_commit", "go", "modified", "schema", "version")
}

func TestCompletion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "completion", "bash")
	if code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d, %d bytes", code, len(out))
	}
	for _, shell := range []string{"", "bash", "zsh", "fish"} {
		args := []string{"completion", shell, "--help"}
		if shell == "" {
			args = []string{"completion", "--help"}
		}
		code, out, _ := runCLI(t, nil, args...)
		if code != 0 || !strings.Contains(out, "Examples:\n  $ et completion "+shell) {
			t.Errorf("et %s: exit %d, no Examples block:\n%s", strings.Join(args, " "), code, out)
		}
	}
}

func TestMissingInputFilesExit2(t *testing.T) {
	missing := t.TempDir() + "/nope.json"
	for _, args := range [][]string{
		{"profile", "report", missing},
		{"profile", "export", missing, "--format", "chrome", "-O", t.TempDir() + "/out.json"},
		{"profile", "diff", missing, missing},
		{"run-op", "-f", missing},
	} {
		code, _, errOut := runCLI(t, nil, args...)
		if code != exitUsage || !strings.Contains(errOut, "nope.json") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the file", args, code, errOut)
		}
	}
}

// TestExitCodes pins the exit code of error paths across commands
// (DESIGN.md §5): bad input and bad output paths are 2, never 1.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	trace := "../../../shared/testdata/et_runtime_trace.sample.json"
	if _, err := os.Stat(trace); err != nil {
		trace = "testdata/profile/et_runtime_trace.json"
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown ops subcommand", []string{"ops", "bogus"}, 2},
		{"unknown profile subcommand", []string{"profile", "bogus"}, 2},
		{"profile group alone", []string{"profile"}, 0},
		{"junit in a missing dir", []string{"run-op", "-f", "../../testcases/norm.yaml", "--junit", dir + "/no/such/r.xml"}, 2},
		{"save-outputs on a file", []string{"run-op", "-f", "../../testcases/norm.yaml", "--save-outputs", "../../go.mod"}, 2},
		{"directory as trace", []string{"profile", "report", dir}, 2},
		{"report missing kernel map", []string{"profile", "report", trace, "--kernel-map", dir + "/nope.json"}, 2},
		{"export missing kernel map", []string{"profile", "export", trace, "--kernel-map", dir + "/nope.json", "-O", dir + "/x.json"}, 2},
		{"export into a missing dir", []string{"profile", "export", trace, "-O", dir + "/no/such/x.json"}, 2},
		{"diff missing kernel map", []string{"profile", "diff", trace, trace, "--base-kernel-map", dir + "/nope.json"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, tt.args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.want, errOut)
			}
			if strings.Contains(errOut, ".tmp") {
				t.Errorf("error names a temp file: %q", errOut)
			}
		})
	}
}

// A failed export leaves neither the output nor a temp file behind.
func TestExportLeavesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	os.WriteFile(bad, []byte(`{"value0": {"type": 1, "class": "x"}, "value1": [}`), 0o644)
	code, _, errOut := runCLI(t, nil, "profile", "export", bad, "--format", "chrome", "-O", dir+"/out.json")
	if code != exitUsage {
		t.Fatalf("exit %d (%s), want 2", code, errOut)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "bad.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

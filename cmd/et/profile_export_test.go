package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/profile"
)

func TestProfileExportRun(t *testing.T) {
	root := t.TempDir()
	trace := genTraceDir(t, root, "run", profile.GenOptions{Ops: 200, Seed: 1})
	bad := filepath.Join(root, "bad.json")
	os.WriteFile(bad, []byte(`{"value0": {"type": 5}}`), 0o644)
	sampleDir := filepath.Join(root, "sample")
	os.MkdirAll(sampleDir, 0o755)
	for src, dst := range map[string]string{"sample.json": "et_runtime_trace.json", "sample_kernel_id.json": "kernel_id.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "internal", "profile", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sampleDir, dst), b, 0o644)
	}
	sample := filepath.Join(sampleDir, "et_runtime_trace.json")

	t.Run("to file with json summary", func(t *testing.T) {
		out := filepath.Join(root, "out.json")
		code, stdout, stderr := runCLI(t, nil, "profile", "export", sample, "-O", out, "-o", "json")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %s", code, stderr)
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		want := "bytes counters device_spans devices events flows format host_events output schema trace truncated warnings"
		if got := strings.Join(diffKeys(sum), " "); got != want {
			t.Errorf("summary keys = %s, want %s", got, want)
		}
		if sum["schema"] != "et.profile-export/v1" || sum["device_spans"] != 4.0 || sum["flows"] != 4.0 {
			t.Errorf("summary: %v", sum)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) || !bytes.Contains(b, []byte(`"name":"mul_mat_f32","cat":"device"`)) {
			t.Errorf("export invalid or kernel not named from kernel_id.json beside the trace:\n%.400s", b)
		}
		if sum["bytes"] != float64(len(b)) {
			t.Errorf("bytes %v, file has %d", sum["bytes"], len(b))
		}
	})
	t.Run("to stdout when piped", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, nil, "profile", "export", trace)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %s", code, stderr)
		}
		if !json.Valid([]byte(stdout)) || !strings.Contains(stdout, `"traceEvents":[`) {
			t.Errorf("stdout is not a trace: %.200s", stdout)
		}
	})
	t.Run("from stdin", func(t *testing.T) {
		b, _ := os.ReadFile(trace)
		f, out, errOut := testFactory(nil)
		f.IO.In = bytes.NewReader(b)
		if code := execute(context.Background(), f, []string{"profile", "export", "-", "-O", "-"}); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !json.Valid(out.Bytes()) {
			t.Errorf("not JSON")
		}
	})
	t.Run("refuses a terminal", func(t *testing.T) {
		f, out, errOut := testFactory(nil)
		f.IO.OutTTY = true
		code := execute(context.Background(), f, []string{"profile", "export", trace})
		if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "refusing to write trace JSON to a terminal") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"json summary needs a file", []string{trace, "-O", "-", "-o", "json"}, "needs -O <file>"},
		{"bad format", []string{trace, "--format", "pprof", "-O", filepath.Join(root, "x.json")}, "invalid --format"},
		{"malformed trace", []string{bad, "-O", filepath.Join(root, "bad-out.json")}, "parsing trace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, append([]string{"profile", "export"}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	// A failed export leaves neither the output nor a temporary file.
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".bad-out") || e.Name() == "bad-out.json" || e.Name() == "x.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	t.Run("truncated trace warns", func(t *testing.T) {
		dir := genTraceDir(t, root, "crash", profile.GenOptions{Ops: 100, Seed: 2, NoClose: true})
		code, _, stderr := runCLI(t, nil, "profile", "export", dir, "-O", filepath.Join(root, "crash.json"))
		if code != 0 || !strings.Contains(stderr, "et: warning:") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestNewProfileExportCmdHelp(t *testing.T) {
	code, out, _ := runCLI(t, nil, "profile", "export", "--help")
	if code != 0 || !strings.Contains(out, "  $ et profile export ") {
		t.Errorf("exit %d, help:\n%s", code, out)
	}
	code, out, _ = runCLI(t, nil, "profile", "diff", "--help")
	if code != 0 || !strings.Contains(out, "  $ et profile diff ") {
		t.Errorf("exit %d, help:\n%s", code, out)
	}
}

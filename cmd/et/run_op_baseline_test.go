package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunOpBaselineFlags: the regression gate's flags are checked before
// anything runs (exit 2, one line naming the flag), and a baseline file
// that is not an et run-op --perf report is refused naming the file.
func TestRunOpBaselineFlags(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":"et.run-op/v1","results":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--baseline", bad}, "add --perf"},
		{[]string{"--perf", "--baseline", bad, "--baseline-kernels", dir}, "give one baseline"},
		{[]string{"--perf", "--baseline", bad, "--max-regression", "-1"}, "--max-regression -1"},
		{[]string{"--perf", "--baseline-kernels", dir}, "loads kernel ELFs"},
		{[]string{"--perf", "--baseline", bad}, "no perf rows"},
		{[]string{"--perf", "--baseline", filepath.Join(dir, "missing.json")}, "missing.json"},
	} {
		code, out, errOut := runCLI(t, nil, append([]string{"run-op", "-f", "../../testcases/norm.yaml"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

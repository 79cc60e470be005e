package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands' output flags go through internal/outfile: --junit, profile
// export -O and run-kernel --dump.
func TestOutputFlagsKeepLinks(t *testing.T) {
	dir := t.TempDir()
	link := func(name string) string {
		p := filepath.Join(dir, name)
		os.Symlink("/dev/null", p)
		return p
	}
	full := func(name string) string {
		p := filepath.Join(dir, name)
		os.Symlink("/dev/full", p)
		return p
	}
	check := func(t *testing.T, p string) {
		t.Helper()
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s replaced by a regular file", p)
		}
	}
	t.Run("junit", func(t *testing.T) {
		p := link("junit.xml")
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--junit", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
		p = full("junit-full.xml")
		code, _, errOut = runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--junit", p)
		if code != exitInternal || !strings.Contains(errOut, "write "+p+": no space left on device") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("profile export", func(t *testing.T) {
		p := link("trace.chrome.json")
		code, _, errOut := runCLI(t, nil, "profile", "export", "testdata/profile/et_runtime_trace.json", "-O", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
		p = full("trace-full.json")
		code, _, errOut = runCLI(t, nil, "profile", "export", "testdata/profile/et_runtime_trace.json", "-O", p)
		if code != exitInternal || !strings.Contains(errOut, "write "+p+": no space left on device") || strings.Contains(errOut, ".tmp") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("run-kernel dump", func(t *testing.T) {
		p := link("x.bin")
		code, _, errOut := runCLI(t, nil, "run-kernel", writeKernelFile(t, "rms_norm_f32"), "--buf", "x=64:pattern",
			"--arg", "pad:680", "--dump", "x="+p)
		if code != exitNegative { // all-zero params fault, as in TestRunKernelRef
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
	})
}

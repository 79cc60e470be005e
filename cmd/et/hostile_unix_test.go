//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/runner"
)

// One bad file in -f DIR does not stop the directory: every bad file is
// reported, the good ones run, and the command exits 2 at the end.
func TestRunOpDirWithBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../testcases/binary.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a_good.yaml"), good, 0o644)
	os.WriteFile(filepath.Join(dir, "b_syntax.yaml"), []byte("name: [\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c_badnpy.yaml"), []byte("name: n\ntensors:\n  x: {type: f32, ne: [4], init: {npy: x.npy}}\nnodes:\n  - {name: y, op: cont, src: [x]}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "x.npy"), []byte("junk"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "d_fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "e_good.yaml"), good, 0o644)
	code, out, errOut := runCLI(t, nil, "run-op", "-f", dir, "-o", "json")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(doc.Results) != 8 {
		t.Errorf("%d results, want the 8 outputs of the two good cases", len(doc.Results))
	}
	for _, want := range []string{
		"et: " + filepath.Join(dir, "b_syntax.yaml") + ":",
		"et: " + filepath.Join(dir, "c_badnpy.yaml") + ":3: tensor x: " + filepath.Join(dir, "x.npy") + ": not a .npy file",
		"et: " + filepath.Join(dir, "d_fifo.yaml") + ": cannot read: not a regular file",
		"et: 3 of 5 cases could not be run (errors above)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// A case file or trace given as a FIFO is read (a shell's <(...) is one).
func TestInputsFromFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "case.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile("../../testcases/binary.yaml")
	go func() {
		fh, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			fh.Write(good)
			fh.Close()
		}
	}()
	code, out, errOut := runCLI(t, nil, "run-op", "-f", fifo)
	if code != 0 || !strings.Contains(out, "4/4 outputs passed") {
		t.Errorf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
}

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

// No command writes over a file it reads (issue 33): the output is
// refused with exit 2 when it is an input, through a link or a hard
// link, and the input keeps its bytes.
func TestNeverOverwriteAnInput(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, dst string) []byte {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dst, b, 0o644)
		return b
	}
	trace := filepath.Join(dir, "et_runtime_trace.json")
	traceBytes := copyFile("testdata/profile/et_runtime_trace.json", trace)
	km := filepath.Join(dir, "kernel_id.json")
	kmBytes := copyFile("testdata/profile/kernel_id.json", km)
	link := filepath.Join(dir, "link.json")
	os.Symlink("et_runtime_trace.json", link)
	hard := filepath.Join(dir, "hard.json")
	os.Link(km, hard)

	// A case whose leaf is read from a .npy file, then replayed into the
	// directory it reads from.
	saved := filepath.Join(dir, "saved")
	if code, _, errOut := runCLI(t, nil, "run-op", "SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1)", "--save-inputs", saved); code != 0 {
		t.Fatalf("--save-inputs: exit %d: %s", code, errOut)
	}
	savedCase := filepath.Join(saved, "case.yaml")
	npys, _ := filepath.Glob(filepath.Join(saved, "*.npy"))
	if len(npys) == 0 {
		t.Fatal("no .npy saved")
	}
	before := map[string][]byte{trace: traceBytes, km: kmBytes}
	for _, p := range append(npys, savedCase) {
		before[p], _ = os.ReadFile(p)
	}

	for _, tt := range []struct {
		name string
		args []string
	}{
		{"export onto its trace", []string{"profile", "export", trace, "-O", trace}},
		{"export onto a link to its trace", []string{"profile", "export", trace, "-O", link}},
		{"export onto its trace named by a link", []string{"profile", "export", link, "-O", trace}},
		{"export onto its kernel map beside the trace", []string{"profile", "export", trace, "-O", km}},
		{"export onto a hard link of its kernel map", []string{"profile", "export", trace, "--kernel-map", km, "-O", hard}},
		{"run-op --junit onto its case file", []string{"run-op", "-f", savedCase, "--junit", savedCase}},
		{"run-op --junit onto a case of its directory", []string{"run-op", "-f", saved, "--junit", savedCase}},
		{"run-op --save-inputs into the directory its leaves come from", []string{"run-op", "-f", savedCase, "--save-inputs", saved}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, "refusing to overwrite an input") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 refusing to overwrite an input", code, errOut)
			}
		})
	}
	for p, b := range before {
		if got, _ := os.ReadFile(p); string(got) != string(b) {
			t.Errorf("%s was overwritten", p)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced")
	}
}

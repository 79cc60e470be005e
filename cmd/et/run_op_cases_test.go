package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/runner"
)

// TestRunOpManyCaseStrings runs case strings given as arguments and in a
// --cases file as one run: the device is opened once, every case has its
// rows in the order given, and a bad line is an input error naming
// file:line while the good cases still run.
func TestRunOpManyCaseStrings(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "cases.txt")
	os.WriteFile(list, []byte("# cases from test-backend-ops\n\nADD(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)\n  MUL(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)  \n# done\n"), 0o644)
	run := func(t *testing.T, opts *runOpOptions) (error, runner.Report, string, int) {
		t.Helper()
		f, out, errOut := testFactory(nil)
		f.Global.Output = "json"
		opens := 0
		opts.backendOptions = backendOptions{Backend: "ref"}
		opts.PerfRuns, opts.Jobs = 1, 1
		opts.OpenDevice = func(ctx context.Context, s registry.Spec) (*registry.Handle, error) {
			opens++
			return registry.Open(ctx, s)
		}
		err := runOpRun(context.Background(), f, opts)
		var doc runner.Report
		if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
			t.Fatalf("json: %v\n%s%s", jerr, out, errOut)
		}
		return err, doc, errOut.String(), opens
	}
	cases := func(d runner.Report) []string {
		var c []string
		for _, r := range d.Results {
			c = append(c, r.Case)
		}
		return c
	}
	t.Run("arguments", func(t *testing.T) {
		opts := &runOpOptions{caseSources: caseSources{CaseArgs: []string{
			"ADD(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)", "MUL(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)", "SQR(type=f32,ne=[8,2,1,1])"}}}
		err, doc, errOut, opens := run(t, opts)
		want := []string{"ADD(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)", "MUL(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)", "SQR(type=f32,ne=[8,2,1,1])"}
		if err != nil || opens != 1 || strings.Join(cases(doc), " ") != strings.Join(want, " ") {
			t.Errorf("err %v, %d opens, cases %q (stderr %s)", err, opens, cases(doc), errOut)
		}
	})
	t.Run("file", func(t *testing.T) {
		err, doc, errOut, opens := run(t, &runOpOptions{caseSources: caseSources{CaseFiles: []string{list}}})
		got := cases(doc)
		if err != nil || opens != 1 || len(got) != 2 || !strings.HasPrefix(got[0], "ADD(") || !strings.HasPrefix(got[1], "MUL(") {
			t.Errorf("err %v, %d opens, cases %q (stderr %s)", err, opens, got, errOut)
		}
	})
	t.Run("bad line", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.txt")
		os.WriteFile(bad, []byte("ADD(type=f32,ne=[16,3,1,1],nr=[1,1,1,1],nf=1)\nNOPE(type=f32)\n"), 0o644)
		err, doc, errOut, opens := run(t, &runOpOptions{caseSources: caseSources{CaseFiles: []string{bad}}})
		if exitCode(err) != exitUsage || opens != 1 || len(doc.Results) != 1 || !strings.Contains(errOut, "bad.txt:2: NOPE(type=f32): unknown op") {
			t.Errorf("exit %d (%v), %d opens, %d results, stderr %q", exitCode(err), err, opens, len(doc.Results), errOut)
		}
	})
}

// TestRunOpCasesFileErrors: a --cases file that is missing, a directory
// or holds no case string is an input error (exit 2) naming it.
func TestRunOpCasesFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing\n\n"), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.txt"), "missing.txt: cannot read"},
		{dir, "is a directory (--cases takes a file)"},
		{empty, "empty.txt: no case strings in this file"},
	} {
		code, _, errOut := runCLI(t, nil, "run-op", "--cases", c.path)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.path, code, errOut, c.want)
		}
	}
}

package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/runner"
)

// failWriter fails every write with err.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// Output that does not reach stdout is an I/O error (exit 5), in every
// format: table renderers drop write errors, executeRoot does not.
func TestStdoutWriteErrors(t *testing.T) {
	for _, errno := range []error{syscall.ENOSPC, syscall.EPIPE, syscall.EIO} {
		for _, format := range []string{"table", "json", "csv"} {
			t.Run(errno.Error()+"/"+format, func(t *testing.T) {
				var errOut strings.Builder
				f := newFactory(strings.NewReader(""), failWriter{errno}, &errOut)
				f.Getenv = func(string) string { return "" }
				code := execute(context.Background(), f, []string{"ops", "list", "-o", format})
				if code != exitInternal || !strings.Contains(errOut.String(), "et: write stdout: "+errno.Error()) {
					t.Errorf("exit %d, stderr %q; want exit 5 and the write error", code, errOut.String())
				}
			})
		}
	}
	// A usage error is still a usage error when stdout is gone.
	var errOut strings.Builder
	f := newFactory(strings.NewReader(""), failWriter{syscall.EPIPE}, &errOut)
	if code := execute(context.Background(), f, []string{"ops", "list", "-o", "xml"}); code != exitUsage {
		t.Errorf("bad -o with a broken stdout: exit %d", code)
	}
}

// Inputs that are not regular files are read with a bound.
func TestRunOpEndlessInput(t *testing.T) {
	code, _, errOut := runCLI(t, nil, "run-op", "-f", "/dev/zero")
	if code != exitUsage || !strings.Contains(errOut, "/dev/zero: cannot read: not a regular file and longer than 64 MiB") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "k.json")
	os.Symlink("/dev/zero", link)
	code, _, errOut = runCLI(t, nil, "profile", "report", "testdata/profile/et_runtime_trace.json", "--kernel-map", link)
	if code != exitUsage || !strings.Contains(errOut, link) {
		t.Errorf("kernel map /dev/zero: exit %d, stderr %s", code, errOut)
	}
}

// --seed accepts exactly what a case file's seed: accepts.
func TestSeedFlagMatchesYAML(t *testing.T) {
	for _, s := range []string{"0", "42", "0x2a", "0o52", "+7", "-1", "1.5", "1e3", "18446744073709551615", "18446744073709551616",
		"abc", "", "[1]", "{a: 1}", "1 # c", "~", "0b101", "1_000", "0x", "true", "42\n43"} {
		y := "name: t\nseed: " + s + "\ntensors:\n  x: {type: f32, ne: [4]}\nnodes:\n  - {name: y, op: cont, src: [x]}\n"
		c, yerr := graph.LoadBytes("c.yaml", []byte(y), ".")
		v, ferr := graph.ParseSeed(s)
		if (yerr == nil) != (ferr == nil) {
			if strings.Contains(s, "\n") || strings.Contains(s, "#") || s == "" {
				// Not one YAML scalar on a line: the flag refuses it.
				if ferr == nil {
					t.Errorf("--seed %q accepted", s)
				}
				continue
			}
			t.Errorf("seed %q: YAML err %v, flag err %v", s, yerr, ferr)
			continue
		}
		if yerr == nil && c.Seed != v {
			t.Errorf("seed %q: YAML %d, flag %d", s, c.Seed, v)
		}
	}
	code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--seed", "-1")
	if code != exitUsage || !strings.Contains(errOut, `invalid argument "-1" for "--seed" flag`) {
		t.Errorf("--seed -1: exit %d, %s", code, errOut)
	}
	code, _, errOut = runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--seed", "0x2a")
	if code != 0 {
		t.Errorf("--seed 0x2a: exit %d, %s", code, errOut)
	}
}

func TestNMSEFlag(t *testing.T) {
	for _, v := range []string{"-1", "nan", "NaN", "0", "inf", "-inf"} {
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--nmse", v)
		if code != exitUsage || !strings.Contains(errOut, "--nmse: want a positive number") {
			t.Errorf("--nmse %s: exit %d, %s", v, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--nmse", "1e-3"); code != 0 {
		t.Errorf("--nmse 1e-3: exit %d, %s", code, errOut)
	}
}

// nanDevice reads back NaN in every f32.
type nanDevice struct{ driver.Device }

func (d nanDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	if err := d.Device.Read(ctx, src, dst); err != nil {
		return err
	}
	for i := 0; i+3 < len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], 0x7fc00000)
	}
	return nil
}

// A NaN output is a FAIL whose nmse reads NaN, not 0.00e+00.
func TestRunOpNaNOutputs(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		f, out, _ := testFactory(nil)
		f.Global.Output = format
		opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, backendOptions: backendOptions{Backend: "ref"}, PerfRuns: 1,
			OpenDevice: openWrapped(func(d driver.Device) driver.Device { return nanDevice{d} })}
		if err := runOpRun(context.Background(), f, opts); exitCode(err) != exitNegative {
			t.Fatalf("exit %d (%v)", exitCode(err), err)
		}
		if format == "json" {
			var doc runner.Report
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range doc.Results {
				if r.Status != "FAIL" || r.Failure != "nan" {
					t.Errorf("result %+v: want FAIL with failure nan", r)
				}
			}
			continue
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "FAIL") && (!strings.Contains(line, " NaN ") || strings.Contains(line, "0.00e+00")) {
				t.Errorf("row %q: want nmse NaN", line)
			}
		}
	}
}

// A trace without a frequency shows kernel cycles, not 0 ns and 0.0%.
func TestProfileReportNoFrequency(t *testing.T) {
	b, err := os.ReadFile("testdata/profile/et_runtime_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "et_runtime_trace.json")
	os.WriteFile(p, []byte(strings.Replace(string(b), `"frequency": 1000`, `"frequency": 0`, 1)), 0o644)
	code, out, errOut := runCLI(t, nil, "profile", "report", p, "--kernel-map", "testdata/profile/kernel_id.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "1.73M cyc  100.0%") || !strings.Contains(out, "give --freq-mhz") || !strings.Contains(errOut, "--freq-mhz") {
		t.Errorf("stdout:\n%s\nstderr: %s", out, errOut)
	}
}

// Bytes from sysfs never reach the terminal raw: an ESC in the driver
// version would start an escape sequence.
func TestDevicesSanitizeSysfs(t *testing.T) {
	sys, dev := devicesFixture(t, "two-devices")
	os.WriteFile(filepath.Join(sys, "module/et_soc1/version"), []byte("0.20.0\x1b]0;pwned\x07\x1b[2J\n"), 0o644)
	for _, format := range []string{"table", "csv", "markdown", "json"} {
		code, out, errOut := runCLI(t, nil, "devices", "--kind", "pcie", "--sysfs-root", sys, "--dev-root", dev, "-o", format, "-v")
		if strings.ContainsAny(out+errOut, "\x1b\x07") {
			t.Errorf("-o %s: exit %d, raw control bytes in output:\n%q\n%q", format, code, out, errOut)
		}
		if format == "table" && !strings.Contains(out, `\x1b`) {
			t.Errorf("-o table: escaped version not shown:\n%s", out)
		}
	}
}

// Every `$ et ...` line of the docs is valid for a POSIX shell: a '(' or
// ')' outside quotes (a case string, an init expression) is a syntax error
// there, so the example would not run as written.
func TestDocExamplesShellQuoting(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	n := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "$ et ") {
				continue
			}
			n++
			if c, _, _ := strings.Cut(line, " #"); c != "" {
				line = c // a trailing comment
			}
			var bare strings.Builder
			quote := rune(0)
			for _, r := range line {
				switch {
				case quote != 0 && r == quote:
					quote = 0
				case quote != 0:
				case r == '\'' || r == '"':
					quote = r
				default:
					bare.WriteRune(r)
				}
			}
			if strings.ContainsAny(bare.String(), "()") {
				t.Errorf("%s:%d: unquoted ( or ) in %q", p, i+1, line)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d example lines found", n)
	}
}

// failingDevice fails every read back with an I/O error.
type failingDevice struct{ driver.Device }

func (d failingDevice) Read(context.Context, driver.DevPtr, []byte) error {
	return errors.New("dma: input/output error")
}

// An error that is no verdict (a failed read back, a plan or reference
// math failure) never exits 1.
func TestRunOpInternalErrorIsNotAVerdict(t *testing.T) {
	f, _, _ := testFactory(nil)
	opts := &runOpOptions{Files: []string{"../../testcases/binary.yaml"}, backendOptions: backendOptions{Backend: "ref"}, PerfRuns: 1,
		OpenDevice: openWrapped(func(d driver.Device) driver.Device { return failingDevice{d} })}
	err := runOpRun(context.Background(), f, opts)
	if exitCode(err) != exitInternal || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("exit %d (%v), want 5", exitCode(err), err)
	}
}

// Text from files and the environment never reaches the terminal as an
// escape sequence, an error never echoes a huge input whole, and Markdown
// cells never carry HTML (issue 33).
func TestHostileText(t *testing.T) {
	dir := t.TempDir()
	noEscape := func(t *testing.T, what, s string) {
		t.Helper()
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("%s holds a raw ESC or BEL: %q", what, s)
		}
	}
	t.Run("kernel map name", func(t *testing.T) {
		b, _ := os.ReadFile("testdata/profile/et_runtime_trace.json")
		trace := filepath.Join(dir, "et_runtime_trace.json")
		os.WriteFile(trace, b, 0o644)
		os.WriteFile(filepath.Join(dir, "kernel_id.json"), []byte(`{"\u001b]0;PWN\u0007<img src=x onerror=alert(1)>": 0}`), 0o644)
		for _, format := range []string{"table", "markdown"} {
			code, out, errOut := runCLI(t, nil, "profile", "report", trace, "-o", format)
			if code != 0 || !strings.Contains(out, `\x1b]0;PWN\x07`) {
				t.Fatalf("%s: exit %d, stdout %q, stderr %s", format, code, out, errOut)
			}
			noEscape(t, format, out)
			if format == "markdown" && (strings.Contains(out, "<img") || !strings.Contains(out, "&lt;img src=x onerror=alert(1)>")) {
				t.Errorf("markdown cell holds HTML: %s", out)
			}
		}
	})
	t.Run("ET_TOOLCHAIN", func(t *testing.T) {
		code, out, errOut := runCLI(t, map[string]string{"ET_TOOLCHAIN": "/opt/x\n\x1b[31mFAKE ok"}, "check-sysemu")
		if code != exitNegative {
			t.Errorf("exit %d", code)
		}
		noEscape(t, "stdout", out)
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "FAKE ok") && !strings.Contains(line, `/opt/x\x0a\x1b[31mFAKE ok`) {
				t.Errorf("row split or unescaped: %q", line)
			}
		}
		noEscape(t, "stderr", errOut)
	})
	t.Run("case string", func(t *testing.T) {
		code, _, errOut := runCLI(t, nil, "run-op", "ADD\x1b[31m(type=f32\x07)")
		if code != exitUsage || !strings.Contains(errOut, `ADD\x1b[31m`) {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		noEscape(t, "stderr", errOut)
	})
	t.Run("markdown case name", func(t *testing.T) {
		c := filepath.Join(dir, "xss.yaml")
		os.WriteFile(c, []byte("name: \"<script>alert(1)</script>|x\"\ntensors:\n  a: {type: f32, ne: [4]}\nnodes:\n  - {name: s, op: scale, src: [a], params: {scale: 2}}\n"), 0o644)
		code, out, errOut := runCLI(t, nil, "run-op", "-f", c, "-o", "markdown")
		if code != 0 || !strings.Contains(out, `&lt;script>alert(1)&lt;/script>\|x`) || strings.Contains(out, "<script>") {
			t.Errorf("exit %d, stderr %s, stdout:\n%s", code, errOut, out)
		}
	})
	for _, tt := range []struct {
		name, file, content string
		args                []string
	}{
		{"YAML scalar", "big.yaml", "name: x\nnodes:\n  - op: " + strings.Repeat("A", 1<<20) + "\n", []string{"-f"}},
		{"test-file line", "big.txt", "ADD(type=f32,ne=[" + strings.Repeat("1", 1<<20) + "])\n", []string{"--test-file"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.file)
			os.WriteFile(p, []byte(tt.content), 0o644)
			code, _, errOut := runCLI(t, nil, append([]string{"run-op"}, append(tt.args, p)...)...)
			if code != exitUsage || len(errOut) > 4096 || strings.Count(errOut, "\n") != 1 ||
				!strings.Contains(errOut, p+":") || !strings.Contains(errOut, "more bytes)") {
				t.Errorf("exit %d, %d bytes of stderr: %.300q", code, len(errOut), errOut)
			}
		})
	}
}

// clipText keeps each quoted word to maxQuote bytes, whole UTF-8
// characters, and the line to about maxLine.
func TestClipText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a b\nc", "a b; c"},
		{"x " + strings.Repeat("é", 150), "x " + strings.Repeat("é", 100) + "... (100 more bytes)"},
		{"bell\a", `bell\x07`},
	} {
		if got := clipText(tt.in); got != tt.want {
			t.Errorf("clipText(%.40q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := clipText(strings.Repeat("word ", 1<<20))
	if len(long) > maxLine+64 || !strings.HasSuffix(long, "more bytes)") {
		t.Errorf("%d bytes, ends %q", len(long), long[len(long)-30:])
	}
}

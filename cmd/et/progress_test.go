package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

// runOpProgress runs two case files on the reference device with stderr
// a fake terminal or not.
func runOpProgress(t *testing.T, tty bool, args ...string) (int, string) {
	t.Helper()
	f, _, errOut := testFactory(nil)
	f.IO.ErrTTY = tty
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Now = func() time.Time { clock = clock.Add(700 * time.Millisecond); return clock }
	code := execute(context.Background(), f, append([]string{"run-op", "-f", "../../testcases/binary.yaml", "-f", "../../testcases/norm.yaml"}, args...))
	return code, errOut.String()
}

// TestRunOpProgressTerminal: on a terminal, stderr shows the device
// opening and each case, i of N, with its name, the launch running in it
// and (past a second) its elapsed time, on one status line rewritten in
// place and erased before the results; no line is left behind.
func TestRunOpProgressTerminal(t *testing.T) {
	code, errOut := runOpProgress(t, true)
	if code != 0 {
		t.Fatalf("exit %d: %q", code, errOut)
	}
	for _, want := range []string{"\r\x1b[Kopening the ref device (2 cases)", "\r\x1b[Kcase 1/2 binary: generating the inputs", "\r\x1b[Kcase 1/2 binary: uploading the inputs, loading the kernels", "\r\x1b[Kcase 1/2 binary: launch 1/4 el_map_f32 (add_row)", "\r\x1b[Kcase 1/2 binary: launch 4/4 el_map_f32 (mul_same)", "\r\x1b[Kcase 2/2 norm"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %q", want, errOut)
		}
	}
	if !strings.HasSuffix(errOut, "\r\x1b[K") || strings.Contains(errOut, "\n") {
		t.Errorf("the status line is not erased, or lines are left: %q", errOut)
	}
}

// TestRunOpProgressLines: --progress writes a line per finished case when
// stderr is not a terminal (CI logs); without it stderr stays quiet.
func TestRunOpProgressLines(t *testing.T) {
	code, errOut := runOpProgress(t, false, "--progress")
	re := regexp.MustCompile(`^et: case 1/2 binary PASS \([0-9.]+ (ms|s)\)\net: case 2/2 norm PASS \([0-9.]+ (ms|s)\)\n$`)
	if code != 0 || !re.MatchString(errOut) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if code, errOut := runOpProgress(t, false); code != 0 || errOut != "" {
		t.Errorf("without --progress: exit %d, stderr %q", code, errOut)
	}
}

// TestProgressBootAndElapsed: a booting emulator's console lines are the
// status line, not lines on the terminal; a case running past a second
// shows its elapsed time; a finished case's verdict names its statuses.
func TestProgressBootAndElapsed(t *testing.T) {
	f, _, errOut := testFactory(nil)
	f.IO.ErrTTY = true
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Now = func() time.Time { return clock }
	p := newProgress(f, false)
	p.bootLine("spio_uart0", "** SP BL2 STARTED **")
	p.event(runner.CaseProgress{Index: 2, Total: 9, Name: "norm"})
	clock = clock.Add(3 * time.Second)
	p.mu.Lock()
	p.draw()
	p.mu.Unlock()
	clock = clock.Add(time.Second)
	p.event(runner.CaseProgress{Index: 2, Total: 9, Name: "norm", Step: &exec.StepProgress{Index: 1, Total: 2, Kernel: "mul_mat_f32", Nodes: []string{"ffn_up"}}})
	clock = clock.Add(125 * time.Second) // a launch on sysemu can take minutes
	p.mu.Lock()
	p.draw()
	p.mu.Unlock()
	p.done()
	want := "\r\x1b[Kbooting: spio_uart0: ** SP BL2 STARTED **\r\x1b[Kcase 3/9 norm: generating the inputs\r\x1b[Kcase 3/9 norm: generating the inputs (3 s)" +
		"\r\x1b[Kcase 3/9 norm: launch 2/2 mul_mat_f32 (ffn_up)\r\x1b[Kcase 3/9 norm: launch 2/2 mul_mat_f32 (ffn_up) (125 s)\r\x1b[K"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	ev := runner.CaseProgress{Done: true, Results: []runner.Result{{Status: verdict.Pass}, {Status: verdict.XFail}, {Status: verdict.Skip}}}
	if got := caseVerdict(ev); got != "PASS (1 SKIP, 1 XFAIL)" {
		t.Errorf("verdict %q", got)
	}
	ev.Results = append(ev.Results, runner.Result{Status: verdict.Fail})
	if got := caseVerdict(ev); got != "FAIL (1 of 4 outputs)" {
		t.Errorf("verdict %q", got)
	}
}

// TestOpsSupportProgress: ops support (24 s over every case) says what it
// does on a terminal, and erases it before the table; a pipe stays quiet.
func TestOpsSupportProgress(t *testing.T) {
	for _, tty := range []bool{true, false} {
		f, out, errOut := testFactory(nil)
		f.IO.ErrTTY = tty
		code := execute(context.Background(), f, []string{"ops", "support", "RMS_NORM(type=f32,ne=[100,4,1,1])"})
		want := ""
		if tty {
			want = "\r\x1b[Kjudging the cases with ggml-et's supports_op\r\x1b[K"
		}
		if code != 0 || errOut.String() != want || !strings.Contains(out.String(), "RMS_NORM") {
			t.Errorf("tty %v: exit %d, stderr %q", tty, code, errOut)
		}
	}
}

// TestRunOpProgressOneCase: one case is "1 case", not "1 cases".
func TestRunOpProgressOneCase(t *testing.T) {
	f, _, errOut := testFactory(nil)
	f.IO.ErrTTY = true
	if code := execute(context.Background(), f, []string{"run-op", "-f", "../../testcases/norm.yaml"}); code != 0 {
		t.Fatalf("exit %d: %q", code, errOut)
	}
	if !strings.Contains(errOut.String(), "opening the ref device (1 case)\r") {
		t.Errorf("stderr %q", errOut)
	}
}

// TestProgressLongCaseName: a case string longer than the terminal is cut
// in its middle, so the launch and its elapsed time stay on the line.
func TestProgressLongCaseName(t *testing.T) {
	f, _, errOut := testFactory(nil)
	f.IO.ErrTTY, f.IO.Width = true, 80
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Now = func() time.Time { return clock }
	p := newProgress(f, false)
	name := "ADD(type=f32,ne=[4096,7,1,1],nr=[1,1,1,1],nf=1,perm1=0,src_overlap=0)"
	p.event(runner.CaseProgress{Index: 11, Total: 120, Name: name, Step: &exec.StepProgress{Index: 0, Total: 1, Kernel: "el_map_f32", Nodes: []string{"out"}}})
	clock = clock.Add(754 * time.Second)
	p.mu.Lock()
	p.draw()
	p.mu.Unlock()
	last := errOut.String()[strings.LastIndex(errOut.String(), "\x1b[K")+3:]
	if !strings.HasPrefix(last, "case 12/120 ADD(type=f32") || !strings.HasSuffix(last, "src_overlap=0): launch 1/1 el_map_f32 (out) (754 s)") || len([]rune(last)) > 79 {
		t.Errorf("status line %q (%d runes)", last, len([]rune(last)))
	}
	if got := caseStatus(runner.CaseProgress{Index: 0, Total: 1, Name: name}); got != "case 1/1 "+name {
		t.Errorf("without a width: %q", got)
	}
}

// TestBootStatus: devices --boot and run-kernel show a booting emulator's
// console on one status line of a terminal, erased after the boot, not a
// line each; -v keeps the lines.
func TestBootStatus(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		f, _, errOut := testFactory(nil)
		f.IO.ErrTTY, f.Global.Verbose = true, verbose
		spec := (&backendOptions{Backend: "sysemu"}).spec(f, nil)
		done := bootStatus(f, &spec)
		spec.Host.BootLine("spio_uart0", "** SP BL2 STARTED **")
		spec.Host.BootLine("spio_uart0", "MM heartbeat alive!")
		done()
		want := "\r\x1b[Kbooting: spio_uart0: ** SP BL2 STARTED **\r\x1b[Kbooting: spio_uart0: MM heartbeat alive!\r\x1b[K"
		if verbose {
			want = "et: boot: spio_uart0: ** SP BL2 STARTED **\net: boot: spio_uart0: MM heartbeat alive!\n"
		}
		if errOut.String() != want {
			t.Errorf("verbose=%v: stderr %q, want %q", verbose, errOut, want)
		}
	}
}

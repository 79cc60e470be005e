//go:build linux

package etrt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// testWorker returns options that re-execute this test binary as a worker
// serving the fake device with the given faults.
func testWorker(t *testing.T, backend, faults string) WorkerOptions {
	t.Helper()
	return WorkerOptions{
		Exe:     os.Args[0],
		Args:    []string{"-test.run=^$"},
		Env:     []string{"ETRT_TEST_WORKER=1", "ETRT_TEST_FAULT=" + faults, "ETSHIM_FAKE_FAULT=" + faults},
		Backend: backend,
		RunDir:  t.TempDir(),
	}
}

// gone reports whether pid has exited (a zombie counts as exited).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// requireGone fails unless pid exits within a generous deadline (a
// reparented process is reaped by init asynchronously).
func requireGone(t *testing.T, what string, pid int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	t.Errorf("%s (pid %d) is still running", what, pid)
}

func workerPid(p *Proxy) int { return p.proc.cmd.Process.Pid }

func TestWorkerRoundTrip(t *testing.T) {
	o := testWorker(t, "fake", "")
	o.RunDir = "" // a temporary run directory, removed by a clean Close
	dev, err := OpenWorker(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	pid, runDir := workerPid(dev), dev.RunDir()
	if got := dev.Info(); got.Name != "fake0" {
		t.Errorf("Info = %+v", got)
	}
	if _, err := os.Stat(filepath.Join(runDir, "sysemu.log")); err != nil {
		t.Errorf("the worker does not run in its run directory: %v", err)
	}
	exercise(t, dev)
	if err := dev.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	requireGone(t, "worker", pid)
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("temporary run directory %s kept after a clean run (%v)", runDir, err)
	}
	if st := dev.proc.status(); st != "exit status 0" {
		t.Errorf("worker ended with %q, want exit status 0", st)
	}
}

func TestWorkerTimeout(t *testing.T) {
	tests := []struct {
		name   string
		faults string
		op     string
		// session uses WorkerOptions.Timeout instead of a call deadline.
		session bool
	}{
		{name: "sync deadline", faults: "hang_sync", op: "sync"},
		{name: "boot session timeout", faults: "hang_open", op: "open", session: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testWorker(t, "fake", tt.faults)
			o.RunDir = ""
			ctx := context.Background()
			if tt.session {
				o.Timeout = 2 * time.Second
			}
			var dev *Proxy
			var err error
			dev, err = OpenWorker(ctx, o)
			if !tt.session {
				if err != nil {
					t.Fatal(err)
				}
				defer dev.Close()
				pid := workerPid(dev)
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				_, err = dev.Sync(cctx)
				requireGone(t, "worker", pid)
			}
			if !errors.Is(err, driver.ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			var te *TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("err = %T, want *TimeoutError", err)
			}
			if te.Op != tt.op {
				t.Errorf("Op = %q, want %q", te.Op, tt.op)
			}
			if te.RunDir == "" {
				t.Fatal("no run directory in the timeout error")
			}
			defer os.RemoveAll(te.RunDir)
			if _, err := os.Stat(te.RunDir); err != nil {
				t.Errorf("run directory not kept after a timeout: %v", err)
			}
			if len(te.Tails) != 2 || te.Tails[0].Name != "sysemu.log" || te.Tails[1].Lines[1] != "MAIN:[txt]pcie_enable_link" {
				t.Errorf("Tails = %+v", te.Tails)
			}
			for _, want := range []string{"timed out during " + tt.op, "worker killed", "sysemu.log: INFO still booting", "spio_uart0_tx.log: MAIN:[txt]pcie_enable_link"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestWorkerCrash(t *testing.T) {
	dev, err := OpenWorker(context.Background(), testWorker(t, "fake", "crash_launch"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	k, err := dev.LoadKernel(context.Background(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = dev.Launch(context.Background(), k, nil, driver.LaunchOptions{})
	var we *WorkerError
	if !errors.As(err, &we) {
		t.Fatalf("Launch = %v, want a *WorkerError", err)
	}
	if we.Op != "launch" || we.Status != "exit status 3" || !strings.Contains(we.Stderr, "scripted crash") {
		t.Errorf("WorkerError = %+v", we)
	}
	if !strings.Contains(err.Error(), "etrt worker died during launch (exit status 3): fake device: scripted crash in launch") {
		t.Errorf("message = %q", err)
	}
	if errors.Is(err, driver.ErrTimeout) || errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("a crash is neither a timeout nor unavailable: %v", err)
	}
	if _, err2 := dev.Sync(context.Background()); err2 != err {
		t.Errorf("Sync after the crash = %v, want the same error", err2)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("Close after a crash = %v", err)
	}
}

// WorkerOptions.Timeout counts only the time spent in device calls: host
// work between calls (preparing inputs, reference math) does not use it
// up, and a hung call is still killed when the rest runs out.
func TestWorkerTimeoutCountsDeviceTimeOnly(t *testing.T) {
	o := testWorker(t, "fake", "hang_sync")
	o.RunDir = ""
	o.Timeout = 2 * time.Second
	dev, err := OpenWorker(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	defer os.RemoveAll(dev.RunDir())
	time.Sleep(o.Timeout + 500*time.Millisecond) // host work, longer than the budget
	p, err := dev.Malloc(context.Background(), 64, 64)
	if err != nil {
		t.Fatalf("Malloc after host work longer than --timeout: %v", err)
	}
	if err := dev.Write(context.Background(), p, make([]byte, 64)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	pid := workerPid(dev)
	_, err = dev.Sync(context.Background())
	var te *TimeoutError
	if !errors.As(err, &te) || te.Op != "sync" {
		t.Fatalf("Sync of a hung device = %v, want a TimeoutError during sync", err)
	}
	requireGone(t, "worker", pid)
}

func TestWorkerCancel(t *testing.T) {
	dev, err := OpenWorker(context.Background(), testWorker(t, "fake", "hang_sync"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	pid := workerPid(dev)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = dev.Sync(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, driver.ErrTimeout) {
		t.Fatalf("Sync = %v, want context.Canceled", err)
	}
	requireGone(t, "worker", pid)
}

func TestWorkerInterruptedWhileIdle(t *testing.T) {
	// An interrupt that reaches the worker itself (its process group got
	// the terminal's SIGINT) ends it; the next call reports its death.
	dev, err := OpenWorker(context.Background(), testWorker(t, "fake", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	syscall.Kill(workerPid(dev), syscall.SIGINT)
	requireGone(t, "worker", workerPid(dev))
	_, err = dev.Malloc(context.Background(), 64, 64)
	var we *WorkerError
	if !errors.As(err, &we) || we.Status != "exit status 1" {
		t.Errorf("Malloc = %v, want the worker's death (exit status 1)", err)
	}
}

func TestWorkerOpenFails(t *testing.T) {
	o := testWorker(t, "fake", "open_fail")
	_, err := OpenWorker(context.Background(), o)
	if !errors.Is(err, driver.ErrNoDevice) {
		t.Fatalf("OpenWorker = %v, want ErrNoDevice", err)
	}
	if !strings.Contains(err.Error(), "(logs in "+o.RunDir+")") {
		t.Errorf("error %q does not name the run directory", err)
	}
}

func TestWorkerNotBuilt(t *testing.T) {
	if Built {
		t.Skip("this binary has a runtime shim")
	}
	for _, backend := range []string{"sysemu", "pcie"} {
		o := WorkerOptions{Exe: "/nonexistent/et", Backend: backend}
		if _, err := OpenWorker(context.Background(), o); !errors.Is(err, driver.ErrNotBuilt) {
			t.Errorf("%s: OpenWorker = %v, want ErrNotBuilt", backend, err)
		}
		if _, err := Open(context.Background(), OpenRequest{Backend: backend}); !errors.Is(err, driver.ErrNotBuilt) {
			t.Errorf("%s: Open = %v, want ErrNotBuilt", backend, err)
		}
	}
}

func TestWorkerBadExecutable(t *testing.T) {
	o := WorkerOptions{Exe: filepath.Join(t.TempDir(), "missing"), Backend: "fake"}
	if _, err := OpenWorker(context.Background(), o); err == nil || !strings.Contains(err.Error(), "start") {
		t.Errorf("OpenWorker = %v, want a start error", err)
	}
}

func TestServeWorkerRefusesByHand(t *testing.T) {
	t.Setenv(workerEnv, "")
	if err := ServeWorker(context.Background(), testOpener); err == nil || !strings.Contains(err.Error(), "not by hand") {
		t.Errorf("ServeWorker = %v", err)
	}
}

package etrt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/sysemu"
)

// WorkerCommand is the hidden et subcommand that runs a worker.
const WorkerCommand = "__worker"

// WorkerLog is the file in the run directory that receives the worker's
// stdout and stderr.
const WorkerLog = "worker.log"

// workerEnv is set in a worker's environment; ServeWorker refuses to run
// without it.
const workerEnv = "ET_WORKER_PROTOCOL"

// Worker protocol file descriptors in the child: requests in, responses
// out. Not stdin/stdout: the emulator's UART RX reads stdin (reference
// et-driver-and-sysemu.md §7.9), so stdin is /dev/null, and the runtime
// and emulator may write to stdout.
const (
	workerFDIn  = 3
	workerFDOut = 4
)

// WorkerOptions say how to start a worker and which device it opens.
type WorkerOptions struct {
	// Exe is the et binary; "" means os.Executable.
	Exe string
	// Args are the arguments that make Exe a worker; nil means
	// WorkerCommand --backend Backend.
	Args []string
	// Env is added to the worker's environment.
	Env []string
	// Backend is "sysemu" or "pcie" (or "ref", served by et's worker).
	Backend string
	// Index is the device index.
	Index int
	// Prefix is the ET install the emulator boots from (sysemu).
	Prefix sysemu.Prefix
	// RunDir receives the UART logs and sysemu.log, and is the worker's
	// current directory. "" means a new temporary directory, removed by a
	// clean Close and kept on failure.
	RunDir string
	// SysemuOpts are extra emulator options (--sysemu-opt).
	SysemuOpts []string
	// MaxCycles stops the emulator after this many cycles; 0 means none.
	MaxCycles uint64
	// Memcheck turns the emulator's coherency checker on (off by default:
	// reference §9).
	Memcheck bool
	// Timeout bounds the time the session spends in device calls: the
	// open (boot included), loads, copies, launches and syncs, added up.
	// Host work between calls (preparing inputs, reference math) does not
	// count. 0 means only the contexts of the calls bound them.
	Timeout time.Duration
	// Check validates the install before booting; nil means sysemu.Check.
	Check func(context.Context, sysemu.Options) sysemu.Report
	// Booting, when set, is called once the run directory exists (its
	// absolute path), before the install is checked and the worker
	// starts; the stop it returns is called when the open returns.
	Booting func(runDir string) (stop func())
}

// Available fails with driver.ErrNotBuilt when backend needs the runtime
// shim (sysemu, pcie) and this binary has none (built without the etrt or
// etrtfake tag, or without cgo): the one answer to "is this backend built
// in?". Other backends are served by the worker's Opener.
func Available(backend string) error {
	if (backend == string(driver.KindSysemu) || backend == string(driver.KindPCIe)) && !Built {
		return fmt.Errorf("%s backend: %w", backend, driver.ErrNotBuilt)
	}
	return nil
}

// OpenWorker starts a worker process (et re-executing itself) that opens
// the device, and returns a proxy driver.Device. For sysemu the install is
// checked first, as et check-sysemu does, and a failing install is refused
// with its failed checks (CheckError, driver.ErrUnavailable). Without the
// runtime shim in this binary, sysemu and pcie give driver.ErrNotBuilt.
//
// The worker runs in its own process group with stdin from /dev/null.
// When ctx expires, or the calls exhaust Timeout, the group is killed and
// the error is a
// TimeoutError (driver.ErrTimeout) carrying the tails of the run
// directory's logs; when ctx is cancelled the worker gets SIGINT, then
// SIGKILL. Close always stops the worker.
func OpenWorker(ctx context.Context, o WorkerOptions) (*Proxy, error) {
	if err := Available(o.Backend); err != nil {
		return nil, err
	}
	exe := o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("etrt worker: find the et binary: %w", err)
		}
	}
	args := o.Args
	if args == nil {
		args = []string{WorkerCommand, "--backend", o.Backend}
	}

	runDir, temp := o.RunDir, false
	if runDir == "" {
		d, err := os.MkdirTemp("", "et-"+o.Backend+"-")
		if err != nil {
			return nil, fmt.Errorf("etrt worker: run directory: %w", err)
		}
		runDir, temp = d, true
	} else if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("etrt worker: run directory: %w", err)
	}
	if abs, err := filepath.Abs(runDir); err == nil {
		runDir = abs
	}
	cleanup := func() {
		if temp {
			os.RemoveAll(runDir)
		}
	}
	if o.Booting != nil {
		if stop := o.Booting(runDir); stop != nil {
			defer stop()
		}
	}

	req := OpenRequest{Backend: o.Backend, Index: o.Index}
	if o.Backend == string(driver.KindSysemu) {
		cfg, err := sysemuConfig(ctx, o, runDir)
		if err != nil {
			cleanup()
			return nil, err
		}
		req.Sysemu = cfg
	}

	proc, r, w, err := startWorker(exe, args, o.Env, runDir)
	if err != nil {
		cleanup()
		return nil, err
	}
	p := newProxy(r, w, multiCloser{r, w})
	p.proc, p.budget, p.runDir, p.tempRunDir = proc, o.Timeout, runDir, temp
	if err := p.open(ctx, req); err != nil {
		if !p.failed {
			cleanup()
		}
		return nil, err
	}
	return p, nil
}

// sysemuConfig checks the install and builds the emulator options.
func sysemuConfig(ctx context.Context, o WorkerOptions, runDir string) (SysemuConfig, error) {
	check := o.Check
	if check == nil {
		check = sysemu.Check
	}
	// sysemu.log is written in the worker's current directory, which is
	// the run directory.
	rep := check(ctx, sysemu.Options{Prefix: o.Prefix, RunDir: runDir, Cwd: runDir})
	if !rep.OK() {
		return SysemuConfig{}, &CheckError{Report: rep}
	}
	prefix := o.Prefix.Dir
	if abs, err := filepath.Abs(prefix); err == nil {
		prefix = abs
	}
	cfg := SysemuConfig{
		Executable: filepath.Join(prefix, sysemu.SysEmuBinary),
		RunDir:     runDir,
		LogFile:    filepath.Join(runDir, "sysemu.log"),
		MaxCycles:  o.MaxCycles,
		Memcheck:   o.Memcheck,
		Extra:      o.SysemuOpts,
	}
	for _, f := range sysemu.FirmwareFiles {
		cfg.Firmware = append(cfg.Firmware, filepath.Join(prefix, f))
	}
	return cfg, nil
}

// CheckError is an install that failed its checks: the emulator is not
// booted. It wraps driver.ErrUnavailable (exit 3).
type CheckError struct {
	Report sysemu.Report
}

func (e *CheckError) Error() string {
	failed := e.Report.Failed()
	parts := make([]string, 0, len(failed))
	for _, r := range failed {
		parts = append(parts, r.ID+": "+r.Detail)
	}
	return fmt.Sprintf("sysemu install %s failed %d check(s), not booting (run et check-sysemu): %s",
		e.Report.Prefix.Dir, len(failed), strings.Join(parts, "; "))
}

// Unwrap makes the error a driver.ErrUnavailable.
func (e *CheckError) Unwrap() error { return driver.ErrUnavailable }

// process is a running worker.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the worker has exited
	waitErr error
	out     *tailBuffer
}

// startWorker starts exe as a worker with the protocol pipes on fds 3 and
// 4, and returns the parent's ends.
func startWorker(exe string, args, env []string, dir string) (*process, *os.File, *os.File, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("etrt worker: %w", err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, nil, nil, fmt.Errorf("etrt worker: %w", err)
	}
	out := &tailBuffer{max: 16 << 10}
	var sink io.Writer = out
	// The worker's output (runtime and emulator messages) is also kept in
	// the run directory.
	logf, logErr := os.Create(filepath.Join(dir, WorkerLog))
	if logErr == nil {
		sink = io.MultiWriter(out, logf)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), workerEnv+"=1"), env...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = sink
	cmd.Stderr = sink
	cmd.ExtraFiles = []*os.File{reqR, respW} // fds 3 and 4
	cmd.WaitDelay = 2 * time.Second
	setProcAttr(cmd)
	p := &process{cmd: cmd, done: make(chan struct{}), out: out}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the OS thread that started the child
		// exits, not the process: start and wait from one locked thread
		// that lives exactly as long as the worker.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		if logf != nil {
			logf.Close()
		}
		close(p.done)
	}()
	err = <-started
	reqR.Close()
	respW.Close()
	if err != nil {
		reqW.Close()
		respR.Close()
		if logf != nil {
			logf.Close()
		}
		return nil, nil, nil, fmt.Errorf("etrt worker: start %s: %w", exe, err)
	}
	return p, respR, reqW, nil
}

// waitFor waits up to d for the worker to exit.
func (p *process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// kill kills the worker's process group and waits for the worker.
func (p *process) kill() {
	p.killGroup()
	p.cmd.Process.Kill()
	<-p.done
}

// interrupt sends SIGINT to the worker's group and kills it if it has not
// exited after grace.
func (p *process) interrupt(grace time.Duration) {
	interruptGroup(p.cmd)
	if !p.waitFor(grace) {
		p.kill()
	}
}

func (p *process) killGroup() { killGroup(p.cmd) }

// status describes how the worker ended; call after done.
func (p *process) status() string {
	<-p.done
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

type multiCloser []*os.File

func (m multiCloser) Close() error {
	for _, f := range m {
		f.Close()
	}
	return nil
}

// ServeWorker is the body of "et __worker": it serves the protocol on the
// pipes its parent passed as fds 3 and 4, opening the device with open.
// It refuses to run when not started by OpenWorker.
func ServeWorker(ctx context.Context, open Opener) error {
	if os.Getenv(workerEnv) != "1" {
		return errors.New(WorkerCommand + " is started by et itself (OpenWorker), not by hand")
	}
	// Non-blocking, the request pipe is in the runtime's poller, so
	// Serve can end its reader when it returns.
	setNonblock(workerFDIn)
	in := os.NewFile(workerFDIn, "et-worker-requests")
	out := os.NewFile(workerFDOut, "et-worker-responses")
	for _, f := range []*os.File{in, out} {
		if f == nil {
			return errors.New(WorkerCommand + ": the protocol pipes (fds 3 and 4) are not open")
		}
		if _, err := f.Stat(); err != nil {
			return fmt.Errorf("%s: the protocol pipes (fds 3 and 4) are not open: %w", WorkerCommand, err)
		}
	}
	defer in.Close()
	defer out.Close()
	return Serve(ctx, in, out, open)
}

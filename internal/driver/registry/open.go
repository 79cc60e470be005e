// Package registry is the one place that lists and opens et's devices:
// the reference device (in process), and sysemu and PCIe cards through
// the ET runtime in a worker process (etrt.OpenWorker), which serves them
// in process (ServeWorker). Every command opens devices here, with Open.
package registry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/sysemu"
)

// Backends are the backend names a device is opened by, in the order
// commands list them.
var Backends = []string{string(driver.KindRef), string(driver.KindSysemu), string(driver.KindPCIe)}

// Native reports whether a backend runs through the ET runtime.
func Native(backend string) bool {
	return backend == string(driver.KindSysemu) || backend == string(driver.KindPCIe)
}

// Available fails early, before any work, when the backend is not built
// into this binary (driver.ErrNotBuilt; etrt.Available).
func Available(backend string) error { return etrt.Available(backend) }

// openRef opens the reference device with ABI manifest m (nil: the
// built-in one). Its only index is 0.
func openRef(index int, m *abi.Manifest) (driver.Device, error) {
	if index != 0 {
		return nil, fmt.Errorf("ref device %d: %w (the reference device is index 0)", index, driver.ErrNoDevice)
	}
	if m == nil {
		m = abi.Default()
	}
	return ref.New(ref.Options{Manifest: m}), nil
}

// WorkerOptions say how a sysemu or pcie worker starts (Spec.Worker may
// adjust them: tests re-execute the test binary as the worker).
type WorkerOptions = etrt.WorkerOptions

// LogTail is the end of one log of a run directory.
type LogTail = etrt.LogTail

// Host is what opening a device needs from the process that runs et, and
// where it tells the user what happens: the command supplies it. Every
// field may be nil (the process's own environment, nothing reported).
type Host struct {
	// Executable is the path of the running et binary: the worker runs it.
	Executable func() (string, error)
	Getenv     func(string) string
	Getwd      func() (string, error)
	// Now is the clock for boot times (time.Now when nil).
	Now func() time.Time
	// Logf reports progress (-v).
	Logf func(format string, args ...any)
	// Warnf reports a warning.
	Warnf func(format string, args ...any)
	// BootLine receives the new lines of a booting sysemu device's boot
	// consoles (the Service Processor's and the Master Minion's; console
	// is "spio_uart0" or "pu_uart0"), as they come: progress for a
	// terminal.
	BootLine func(console, line string)
	// Tails receives the log tails that a timeout or a worker's death
	// carries (the one-line error names only each log's last line): when
	// an open fails, and when a device closes after such a failure.
	Tails func([]LogTail)
	// Kept says where the temporary run directory of a device that failed
	// (a timeout, a crash, a stream error, an interrupted call) was kept.
	Kept func(backend, dir string)
}

// bootPoll is how often BootLine's consoles are read.
const bootPoll = 250 * time.Millisecond

func (h *Host) logf(format string, args ...any) {
	if h.Logf != nil {
		h.Logf(format, args...)
	}
}

func (h *Host) warnf(format string, args ...any) {
	if h.Warnf != nil {
		h.Warnf(format, args...)
	}
}

func (h *Host) getenv(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

func (h *Host) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

// tails passes the log tails err carries to Tails.
func (h *Host) tails(err error) {
	if t := LogTails(err); len(t) > 0 && h.Tails != nil {
		h.Tails(t)
	}
}

// Spec says which device to open and how: the --backend, --device,
// --prefix, --run-dir, --sysemu-opt and --timeout flags of the commands
// that open a device.
type Spec struct {
	Backend string
	Index   int
	// Manifest is the reference device's ABI (nil: the built-in one).
	Manifest *abi.Manifest
	// Prefix is --prefix, the ET install sysemu boots from: "" means
	// $ET_TOOLCHAIN, $TOOLCHAIN_ROOT, /opt/et (sysemu.ResolvePrefix); a
	// relative one is taken from the working directory.
	Prefix string
	// RunDir holds the UART logs, sysemu.log and worker.log; "" means a
	// new temporary directory, removed after a clean run and kept when
	// the device failed.
	RunDir     string
	SysemuOpts []string
	// Timeout bounds the time the device spends in calls in all (boot,
	// loads, copies, launches, syncs), counted by the worker (0: none).
	Timeout time.Duration
	// Worker adjusts the worker's options before it starts.
	Worker func(*WorkerOptions)
	// Host is the process's environment and what the user is told.
	Host Host
}

// Handle is an open device and its run directory.
type Handle struct {
	Device  driver.Device
	Backend string
	// RunDir is the device's run directory ("" for the reference device).
	RunDir string
	// Temp is true when RunDir is a temporary directory of this device.
	Temp bool
	host Host
}

// Close closes the device (stopping its worker), with runErr the error
// the work on it ended with (nil: none). It shows the log tails runErr
// carries (Host.Tails). A temporary run directory is removed after a
// clean run and kept when the device failed (a timeout, a crash, a
// stream error, an interrupted call: not an out-of-tolerance verdict);
// Host.Kept then names it.
func (h *Handle) Close(runErr error) {
	failed := false
	if f, ok := h.Device.(interface{ Failed() bool }); ok {
		failed = f.Failed()
	}
	h.Device.Close() // removes a clean temporary run directory
	h.host.tails(runErr)
	if h.Temp && failed && h.host.Kept != nil {
		h.host.Kept(h.Backend, h.RunDir)
	}
}

// Open opens the device of s, the one way every command opens one: the
// reference device in process, sysemu or pcie in a worker process (booting the emulator; etrt.OpenWorker makes
// the run directory). When it fails, the log tails the error carries go
// to Host.Tails.
func Open(ctx context.Context, s Spec) (*Handle, error) {
	if s.Backend == string(driver.KindRef) {
		dev, err := openRef(s.Index, s.Manifest)
		if err != nil {
			return nil, err
		}
		return &Handle{Device: dev, Backend: s.Backend, host: s.Host}, nil
	}
	if !Native(s.Backend) {
		return nil, fmt.Errorf("unknown backend %q (want ref, sysemu or pcie)", s.Backend)
	}
	host := &s.Host // etrt.OpenWorker refuses a backend not built in
	exe, err := executable(host)
	if err != nil {
		return nil, fmt.Errorf("%s backend: find the et binary: %w", s.Backend, err)
	}
	cwd := ""
	if host.Getwd != nil {
		cwd, _ = host.Getwd()
	}
	prefix := sysemu.ResolvePrefix(s.Prefix, host.getenv)
	if prefix.Dir != "" && !filepath.IsAbs(prefix.Dir) && cwd != "" {
		prefix.Dir = filepath.Join(cwd, prefix.Dir)
	}
	runDir := s.RunDir
	if runDir != "" && !filepath.IsAbs(runDir) && cwd != "" {
		runDir = filepath.Join(cwd, runDir)
	}
	wo := WorkerOptions{
		Exe:        exe,
		Backend:    s.Backend,
		Index:      s.Index,
		Prefix:     prefix,
		RunDir:     runDir,
		SysemuOpts: s.SysemuOpts,
		Timeout:    s.Timeout,
		Booting: func(dir string) func() {
			if s.Backend != string(driver.KindSysemu) {
				host.logf("opening pcie device %d through the runtime (run directory %s)", s.Index, dir)
				return nil
			}
			host.logf("booting sysemu from %s (run directory %s)", prefix.Dir, dir)
			if host.BootLine == nil {
				return nil
			}
			return etrt.FollowBootConsoles(dir, bootPoll, host.BootLine)
		},
	}
	if s.Worker != nil {
		s.Worker(&wo)
	}
	start := host.now()
	dev, err := etrt.OpenWorker(ctx, wo)
	if err != nil {
		host.tails(err)
		return nil, err
	}
	host.logf("%s device ready in %s", s.Backend, host.now().Sub(start).Round(time.Millisecond))
	return &Handle{Device: dev, Backend: s.Backend, RunDir: dev.RunDir(), Temp: dev.TempRunDir(), host: s.Host}, nil
}

func executable(h *Host) (string, error) {
	if h.Executable == nil {
		return "", nil // etrt.OpenWorker: os.Executable
	}
	return h.Executable()
}

// WithTimeout applies --timeout to the device work that follows, for a
// command (cmd) on backend. The sysemu and pcie workers count only the
// time spent in device calls (boot, loads, copies, launches, syncs:
// Spec.Timeout), so for them ctx is unchanged. The reference device runs
// in this process: ctx ends when the time from now, less the host work
// (HostWork), is spent, and its cause is a driver.ErrTimeout naming cmd.
func WithTimeout(ctx context.Context, backend string, timeout time.Duration, cmd string) (context.Context, context.CancelFunc) {
	if timeout <= 0 || Native(backend) {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	cause := fmt.Errorf("%s: %w after %s", cmd, driver.ErrTimeout, timeout)
	b := &budget{left: timeout, since: time.Now(), end: func() { cancel(cause) }}
	b.timer = time.AfterFunc(timeout, b.end)
	return context.WithValue(ctx, budgetKey{}, b), func() {
		b.timer.Stop()
		cancel(context.Canceled)
	}
}

type budgetKey struct{}

// budget is the --timeout clock of the reference device: it runs except
// while host work (HostWork) does.
type budget struct {
	mu     sync.Mutex
	left   time.Duration
	since  time.Time // when the clock last started
	paused int       // host work under way
	fired  bool
	timer  *time.Timer
	end    func() // ends the context with the timeout
}

// HostWork stops ctx's --timeout clock (WithTimeout) for host work, such
// as generating or reading a case's inputs, which --timeout does not
// count; the function it returns starts the clock again. Host work of
// several jobs at once keeps the clock stopped until the last ends.
func HostWork(ctx context.Context) (done func()) {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil {
		return func() {}
	}
	b.mu.Lock()
	if b.paused == 0 && !b.fired {
		switch {
		case !b.timer.Stop():
			b.fired = true // its function ends the context
		case time.Since(b.since) >= b.left:
			b.fired = true // spent before the timer ran: end it now
			b.end()
		default:
			b.left -= time.Since(b.since)
		}
	}
	b.paused++
	b.mu.Unlock()
	return sync.OnceFunc(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.paused--; b.paused == 0 && !b.fired {
			b.since = time.Now()
			b.timer.Reset(max(b.left, 0))
		}
	})
}

// LogTails are the log tails a timeout or a worker's death carries: the
// worker's own output first (of a death), then the run directory's logs.
func LogTails(err error) []LogTail {
	var te *etrt.TimeoutError
	var we *etrt.WorkerError
	switch {
	case errors.As(err, &te):
		return te.Tails
	case errors.As(err, &we):
		tails := we.Tails
		if we.Output != "" {
			tails = append([]LogTail{{Name: "worker output", Lines: lastLines(we.Output, etrt.TailLines)}}, tails...)
		}
		return tails
	}
	return nil
}

func lastLines(s string, n int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// WorkerDied reports the death of a device's worker: the emulator or the
// runtime died (an abort, a FATAL), which is no verdict on the kernel
// (docs/exit-codes.md: exit 5).
func WorkerDied(err error) bool {
	var we *etrt.WorkerError
	return errors.As(err, &we)
}

// IsWorkerFailure reports a timeout or death of the device's worker: the
// error carries the log tails and must reach the user as it is.
func IsWorkerFailure(err error) bool {
	var te *etrt.TimeoutError
	return errors.As(err, &te) || WorkerDied(err)
}

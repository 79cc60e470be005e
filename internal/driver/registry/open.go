// Package registry is the one place that lists and opens et's devices:
// the reference device (in process), and sysemu and PCIe cards through
// the ET runtime in a worker process (etrt.OpenWorker), or in process in
// the worker itself (OpenInProcess). Every command opens devices here.
package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// into this binary (driver.ErrNotBuilt).
func Available(backend string) error {
	if Native(backend) && !etrt.Built {
		return fmt.Errorf("%s backend: %w", backend, driver.ErrNotBuilt)
	}
	return nil
}

// OpenRef opens the reference device with ABI manifest m (nil: the
// built-in one). Its only index is 0.
func OpenRef(index int, m *abi.Manifest) (driver.Device, error) {
	if index != 0 {
		return nil, fmt.Errorf("ref device %d: %w (the reference device is index 0)", index, driver.ErrNoDevice)
	}
	if m == nil {
		m = abi.Default()
	}
	return ref.New(ref.Options{Manifest: m}), nil
}

// OpenInProcess opens the device a worker serves: the reference device,
// or sysemu/pcie through the runtime shim (driver.ErrNotBuilt without it).
func OpenInProcess(ctx context.Context, req etrt.OpenRequest) (driver.Device, error) {
	if req.Backend == string(driver.KindRef) {
		return OpenRef(0, nil)
	}
	return etrt.Open(ctx, req)
}

// Spec says which device to open and how.
type Spec struct {
	Backend string
	Index   int
	// Manifest is the reference device's ABI (nil: the built-in one).
	Manifest *abi.Manifest
	// Prefix is the ET install sysemu boots from, resolved
	// (sysemu.ResolvePrefix); a relative one is taken from Cwd.
	Prefix sysemu.Prefix
	Cwd    string
	// RunDir holds the UART logs, sysemu.log and worker.log; "" means a
	// new temporary directory, removed after a clean run and kept when
	// the device failed.
	RunDir     string
	SysemuOpts []string
	// Timeout bounds each device call in the worker (0: none).
	Timeout time.Duration
	// Exe is the et binary the worker runs.
	Exe string
	// Worker adjusts the worker's options before it starts (tests
	// re-execute the test binary as the worker).
	Worker func(*etrt.WorkerOptions)
	// Logf reports progress (nil: quiet).
	Logf func(format string, args ...any)
	// Progress, when set, shows the boot of a sysemu device from its run
	// directory until the returned stop is called.
	Progress func(runDir string) (stop func())
	// Now is the clock for the boot time (time.Now when nil).
	Now func() time.Time
}

func (s *Spec) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// Handle is an open device and its run directory.
type Handle struct {
	Device driver.Device
	// RunDir is the device's run directory ("" for the reference device).
	RunDir string
	// Temp is true when RunDir is a temporary directory of this handle.
	Temp bool
}

// Close closes the device (stopping its worker). A temporary run
// directory is removed after a clean run and kept when the device failed
// (a timeout, a crash, a stream error, an interrupted call: not an
// out-of-tolerance verdict); kept names it then ("" otherwise).
func (h *Handle) Close() (kept string) {
	failed := false
	if f, ok := h.Device.(interface{ Failed() bool }); ok {
		failed = f.Failed()
	}
	h.Device.Close()
	if !h.Temp {
		return ""
	}
	if failed {
		return h.RunDir
	}
	os.RemoveAll(h.RunDir)
	return ""
}

// Open opens the device of s: the reference device in process, sysemu or
// pcie in a worker process (booting the emulator). A boot that fails
// keeps the temporary run directory unless nothing ran (the install
// check or the binary refused it).
func Open(ctx context.Context, s Spec) (*Handle, error) {
	if s.Backend == string(driver.KindRef) {
		dev, err := OpenRef(s.Index, s.Manifest)
		if err != nil {
			return nil, err
		}
		return &Handle{Device: dev}, nil
	}
	if !Native(s.Backend) {
		return nil, fmt.Errorf("unknown backend %q (want ref, sysemu or pcie)", s.Backend)
	}
	if err := Available(s.Backend); err != nil {
		return nil, err
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	prefix := s.Prefix
	if prefix.Dir != "" && !filepath.IsAbs(prefix.Dir) && s.Cwd != "" {
		prefix.Dir = filepath.Join(s.Cwd, prefix.Dir)
	}
	h := &Handle{RunDir: s.RunDir}
	if h.RunDir == "" {
		var err error
		if h.RunDir, err = os.MkdirTemp("", "et-"+s.Backend+"-"); err != nil {
			return nil, fmt.Errorf("%s backend: run directory: %w", s.Backend, err)
		}
		h.Temp = true
	} else if !filepath.IsAbs(h.RunDir) && s.Cwd != "" {
		h.RunDir = filepath.Join(s.Cwd, h.RunDir)
	}
	wo := etrt.WorkerOptions{
		Exe:        s.Exe,
		Backend:    s.Backend,
		Index:      s.Index,
		Prefix:     prefix,
		RunDir:     h.RunDir,
		SysemuOpts: s.SysemuOpts,
		Timeout:    s.Timeout,
	}
	if s.Worker != nil {
		s.Worker(&wo)
	}
	if s.Backend == string(driver.KindSysemu) {
		s.logf("booting sysemu from %s (run directory %s)", prefix.Dir, h.RunDir)
	} else {
		s.logf("opening pcie device %d through the runtime (run directory %s)", s.Index, h.RunDir)
	}
	var stop func()
	if s.Backend == string(driver.KindSysemu) && s.Progress != nil {
		stop = s.Progress(h.RunDir)
	}
	start := now()
	dev, err := etrt.OpenWorker(ctx, wo)
	if stop != nil {
		stop()
	}
	if err != nil {
		var ce *etrt.CheckError
		if h.Temp && (errors.As(err, &ce) || errors.Is(err, driver.ErrNotBuilt)) {
			os.RemoveAll(h.RunDir) // nothing ran: nothing to keep
		}
		return nil, err
	}
	s.logf("%s device ready in %s", s.Backend, now().Sub(start).Round(time.Millisecond))
	h.Device = dev
	return h, nil
}

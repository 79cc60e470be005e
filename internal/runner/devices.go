package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/sysemu"
)

// KernelsPathEnv names ggml-et's kernel folder (GGML_ET_KERNELS_PATH):
// where a run's kernel ELFs are read from without --kernels.
const KernelsPathEnv = "GGML_ET_KERNELS_PATH"

// Target is where a run's jobs run: the backend and how its devices open
// (registry.Spec, whose Index is the one --device), with --device as a
// list and --kernels.
type Target struct {
	registry.Spec
	// Devices is a --device list (one job per device); AllDevices is
	// --device all (every usable device of the backend).
	Devices    []int
	AllDevices bool
	// Kernels is --kernels, the folder of kernel ELFs (<kernel>.elf) for
	// sysemu and pcie; "" means $GGML_ET_KERNELS_PATH.
	Kernels string
	// ListDevices lists the usable devices for AllDevices (nil:
	// registry.Usable; tests replace it).
	ListDevices func(context.Context) ([]int, error)
	// Open opens one device (nil: registry.Open; tests wrap it).
	Open func(context.Context, registry.Spec) (*registry.Handle, error)
}

// Devices are the open devices of a run, one per job.
type Devices struct {
	List []driver.Device
	// KernelELF serves the kernel ELFs read before anything booted (nil
	// for the reference device, which knows its kernels by name).
	KernelELF func(name string) ([]byte, error)
	handles   []*registry.Handle
}

// Close closes every device, with runErr the error the run ended with
// (registry.Handle.Close: log tails, kept run directories).
func (d *Devices) Close(runErr error) {
	for _, h := range d.handles {
		if h != nil {
			h.Close(runErr)
		}
	}
}

// OpenDevices opens the devices of a run of planned, jobs of them (one
// per --device of a list or of all; none idle). For sysemu and pcie it
// first makes sure the backend is built and that every kernel the plans
// launch has its ELF in the kernel folder (listing the missing ones
// before anything boots), then boots the devices, each in its own worker
// with its own run directory (RunDir/job<j> for several jobs), in
// parallel. When one fails, the others are closed and the first job's
// error is returned.
func OpenDevices(ctx context.Context, t Target, planned []*Planned, jobs int) (*Devices, error) {
	idx, err := t.indexes(ctx, jobs)
	if err != nil {
		return nil, err
	}
	jobs = min(len(idx), max(len(planned), 1)) // no idle device
	open := t.Open
	if open == nil {
		open = registry.Open
	}
	d := &Devices{}
	if !registry.Native(t.Backend) {
		for j := range jobs {
			s := t.Spec
			s.Index = idx[j]
			h, err := open(ctx, s)
			if err != nil {
				d.Close(err)
				return nil, err
			}
			d.handles = append(d.handles, h)
			d.List = append(d.List, h.Device)
		}
		return d, nil
	}
	if err := registry.Available(t.Backend); err != nil {
		return nil, err
	}
	elfs, err := t.kernelELFs(Kernels(planned))
	if err != nil {
		return nil, err
	}
	d.KernelELF = func(name string) ([]byte, error) {
		if elf, ok := elfs[name]; ok {
			return elf, nil
		}
		return nil, fmt.Errorf("no ELF loaded for kernel %s", name)
	}
	d.handles = make([]*registry.Handle, jobs)
	errs := make([]error, jobs)
	var wg sync.WaitGroup
	for j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := t.Spec
			s.Index = idx[j]
			s.RunDir = jobRunDir(t.RunDir, j, jobs)
			d.handles[j], errs[j] = open(ctx, s)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		d.Close(err)
		for _, e := range errs {
			if e != nil {
				return nil, e // the first job's error, with its exit code
			}
		}
	}
	for _, h := range d.handles {
		d.List = append(d.List, h.Device)
	}
	return d, nil
}

// indexes are the devices the jobs open, one each: the --device list,
// every usable device of the backend for --device all, or jobs times the
// one --device index.
func (t *Target) indexes(ctx context.Context, jobs int) ([]int, error) {
	switch {
	case len(t.Devices) > 0:
		return t.Devices, nil
	case t.AllDevices:
		list := t.ListDevices
		if list == nil {
			list = func(ctx context.Context) ([]int, error) { return registry.Usable(ctx, t.Spec) }
		}
		idx, err := list(ctx)
		if err != nil {
			return nil, err
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("--device all: no usable %s device (see et devices): %w", t.Backend, driver.ErrNoDevice)
		}
		if t.Host.Logf != nil {
			s := make([]string, len(idx))
			for i, v := range idx {
				s[i] = strconv.Itoa(v)
			}
			t.Host.Logf("--device all: %s device(s) %s", t.Backend, strings.Join(s, ","))
		}
		return idx, nil
	}
	idx := make([]int, jobs)
	for j := range idx {
		idx[j] = t.Index
	}
	return idx, nil
}

// jobRunDir is job j's run directory when --run-dir DIR is given for
// several jobs: DIR/job<j>, so that each emulator has its own logs.
func jobRunDir(dir string, j, jobs int) string {
	if dir == "" || jobs == 1 {
		return dir
	}
	return filepath.Join(dir, fmt.Sprintf("job%d", j))
}

// kernelELFs reads <Kernels>/<name>.elf for every name, before anything
// boots (sysemu.LoadKernels: missing kernels are a
// *sysemu.MissingKernelsError, unusable ones an input error, other
// problems warnings). Kernels "" is $GGML_ET_KERNELS_PATH; neither is a
// usage error.
func (t *Target) kernelELFs(names []string) (map[string][]byte, error) {
	if len(names) == 0 {
		return map[string][]byte{}, nil
	}
	dir := t.Kernels
	if dir == "" && t.Host.Getenv != nil {
		dir = t.Host.Getenv(KernelsPathEnv)
	}
	if dir == "" {
		return nil, usageErrorf("no kernel folder: give --kernels DIR or set %s (this run loads %s)", KernelsPathEnv, strings.Join(names, ", "))
	}
	elfs, warns, err := sysemu.LoadKernels(dir, names)
	for _, w := range warns {
		if t.Host.Warnf != nil {
			t.Host.Warnf("%s", w)
		}
	}
	return elfs, err
}

// UsageError is a run that the flags given cannot make (no kernel folder,
// a --profile directory that cannot be made): et prints its usage hint
// with it (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// UsageError marks the error as a misuse of the flags.
func (e *UsageError) UsageError() {}

func usageErrorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

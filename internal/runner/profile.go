package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/outfile"
	trace "github.com/ainekko/et/internal/profile"
)

// ProfileKernelMapFile is the kernel map --profile DIR writes beside the
// trace (driver.ProfileTraceFile), named as ggml-et names it with
// GGML_ET_PROFILE=DIR.
const ProfileKernelMapFile = "kernel_id.json"

// profileStopTimeout bounds stopping a runtime profiler an early return
// left running.
const profileStopTimeout = 30 * time.Second

// profile is run-op's --profile DIR.
//
// On a device whose runtime has its own profiler (driver.Profiler: sysemu
// and pcie through the ET runtime) the runtime writes
// DIR/et_runtime_trace.json, as ggml-et's GGML_ET_PROFILE does, and et
// writes DIR/kernel_id.json from the KernelIds the runtime's loads
// returned. On other devices (the reference device) et records the run
// itself (exec.TraceRecorder) and writes both files.
type profile struct {
	dir string
	// rec is et's recorder; nil with a runtime profiler.
	rec *exec.TraceRecorder
	// prof is the runtime profiler while it runs, loads the kernels
	// loaded meanwhile.
	prof  driver.Profiler
	loads *kernelLoads
	logf  func(format string, args ...any)
	warnf func(format string, args ...any)
}

// newProfile creates DIR, or returns nil without --profile. It runs
// before the device opens, so a bad DIR boots nothing.
func newProfile(dir string, logf, warnf func(format string, args ...any)) (*profile, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErrorf("--profile: %v", err)
	}
	return &profile{dir: dir, logf: logf, warnf: warnf}, nil
}

// start begins profiling dev, before anything runs on it, and returns the
// device the run must use: dev, or dev logging its kernel loads.
func (p *profile) start(ctx context.Context, dev driver.Device) (driver.Device, error) {
	if p == nil {
		return dev, nil
	}
	pr, ok := dev.(driver.Profiler)
	if !ok {
		p.rec = exec.NewTraceRecorder(nil)
		return dev, nil
	}
	if err := pr.StartProfile(ctx, p.dir); err != nil {
		return nil, fmt.Errorf("--profile: start the runtime profiler: %w", err)
	}
	p.prof, p.loads = pr, &kernelLoads{Device: dev}
	p.logf("runtime profiler writing %s", filepath.Join(p.dir, driver.ProfileTraceFile))
	return p.loads, nil
}

// recorder is the run's exec.Options.Trace: et's recorder, or nil.
func (p *profile) recorder() *exec.TraceRecorder {
	if p == nil {
		return nil
	}
	return p.rec
}

// write completes DIR/et_runtime_trace.json and DIR/kernel_id.json after
// the run: it stops the runtime profiler (which waits for the device's
// work) or writes et's recording. Every file is complete before it takes
// its name (a temporary file renamed, or the runtime's partial trace
// renamed by StopProfile).
func (p *profile) write(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if p.rec != nil {
		return p.writeRecorded(ctx)
	}
	if p.prof == nil {
		return nil
	}
	pr := p.prof
	p.prof = nil
	if err := pr.StopProfile(ctx); err != nil {
		return fmt.Errorf("--profile: stop the runtime profiler: %w", err)
	}
	var km bytes.Buffer
	if err := kernelmap.Write(&km, p.loads.entries); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := outfile.WriteFileContext(ctx, filepath.Join(p.dir, ProfileKernelMapFile), km.Bytes()); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	p.logf("the runtime wrote %s; wrote %s (%d kernels)", filepath.Join(p.dir, driver.ProfileTraceFile), ProfileKernelMapFile, len(p.loads.entries))
	return nil
}

// launches are the kernel launches of the runtime's trace DIR, after
// write (nil without a runtime profiler).
func (p *profile) launches(freq uint32) ([]trace.Launch, error) {
	if p == nil || p.loads == nil {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(p.dir, driver.ProfileTraceFile))
	if err != nil {
		return nil, fmt.Errorf("device cycles: %w", err)
	}
	return traceLaunches(b, kernelmap.New(p.loads.entries...), freq)
}

// abort runs when a run returns early: a runtime profiler still running
// is stopped, so that its trace of the part that ran is complete, with its
// kernel map. When that fails (the worker died or hung), the partial trace
// is named in a warning.
func (p *profile) abort(ctx context.Context) {
	if p == nil || p.prof == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), profileStopTimeout)
	defer cancel()
	if err := p.write(ctx); err != nil {
		if partial := filepath.Join(p.dir, driver.ProfileTraceFile+driver.PartialTraceSuffix); fileExists(partial) {
			p.warnf("--profile: the runtime's trace is incomplete (truncated): %s", partial)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// kernelLoads is a device that logs the kernels loaded on it with the
// KernelId the runtime gave each: the kernel_id.json of a runtime trace.
// Each load is an entry (a kernel loaded again, by a later case, gets a new
// id, as in the trace's LoadCode events).
type kernelLoads struct {
	driver.Device
	entries []kernelmap.Entry
}

func (k *kernelLoads) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	id, err := k.Device.LoadKernel(ctx, name, elf)
	if err == nil {
		k.entries = append(k.entries, kernelmap.Entry{Name: name, ID: int(id)})
	}
	return id, err
}

// writeRecorded writes DIR/et_runtime_trace.json and DIR/kernel_id.json
// from et's recording, each through a temporary file renamed when
// complete.
func (p *profile) writeRecorded(ctx context.Context) error {
	var trace, km bytes.Buffer
	if err := p.rec.WriteTrace(&trace); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := p.rec.WriteKernelMap(&km); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	tracePath := filepath.Join(p.dir, driver.ProfileTraceFile)
	if err := outfile.WriteFileContext(ctx, tracePath, trace.Bytes()); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := outfile.WriteFileContext(ctx, filepath.Join(p.dir, ProfileKernelMapFile), km.Bytes()); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	p.logf("wrote %s (%d bytes) and %s (%d kernels)", tracePath, trace.Len(), ProfileKernelMapFile, len(p.rec.Kernels()))
	return nil
}

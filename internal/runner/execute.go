package runner

import (
	"context"
	"time"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/exec"
)

// PerfOptions are --perf's warm-up and timed runs (exec.PerfOptions).
type PerfOptions = exec.PerfOptions

// MaxPerfRuns bounds the timed runs of one launch (exec.MaxPerfRuns):
// --perf-time stops there, and et run-op refuses a --perf-runs or
// --perf-warmup above it.
const MaxPerfRuns = exec.MaxPerfRuns

// ExecuteOptions are a whole run's choices: the options every case
// shares, where the run's jobs run, and --profile.
type ExecuteOptions struct {
	// Options are the choices every case shares; Trace, KernelELF and
	// Expected are Execute's own (--profile, the devices, Prepared).
	Options
	Target Target
	// Jobs is --jobs: the devices the cases are spread over.
	Jobs int
	// Profile is --profile DIR: a runtime trace of the run and its kernel
	// map (one device).
	Profile string
	// Bad receives each case whose data could not be read or generated
	// (an input error of that case alone: the others still ran), as the
	// run ends.
	Bad func(error)
	// Warnf reports a warning (Target.Host.Warnf when nil).
	Warnf func(format string, args ...any)
}

// Executed is what a run of prepared cases gives.
type Executed struct {
	*Outcome
	// Ran is false when no case could run (nothing to show: every case
	// was bad, and the run is not a shard's).
	Ran bool
}

// Execute runs the prepared cases (et run-op without --explain): it makes
// the --profile directory, applies --timeout to the device work, opens
// the devices (OpenDevices), starts the profiler, runs every case (Run)
// with the expected failures of p, and writes the profile; it closes the
// devices before it returns. Errors that stop the run are returned; a
// late failure to write a file is Outcome.LateErr.
func Execute(ctx context.Context, p *Prepared, o ExecuteOptions) (ex *Executed, runErr error) {
	logf, warnf := quiet(o.Logf), quiet(o.Warnf)
	if o.Warnf == nil {
		warnf = quiet(o.Target.Host.Warnf)
	}
	prof, err := newProfile(o.Profile, logf, warnf)
	if err != nil {
		return nil, err
	}
	// --timeout starts here: preparing the inputs does not count.
	ctx, cancel := registry.WithTimeout(ctx, o.Target.Backend, o.Target.Timeout, "run-op")
	defer cancel()
	start := time.Now()
	jobs := min(o.Jobs, len(p.Planned))
	devs, err := OpenDevices(ctx, o.Target, p.Planned, max(jobs, 1))
	if err != nil {
		return nil, err
	}
	boot := time.Since(start)
	defer func() { devs.Close(runErr) }()
	if devs.List[0], err = prof.start(ctx, devs.List[0]); err != nil {
		return nil, err
	}
	defer prof.abort(ctx)
	ro := o.Options
	ro.Trace, ro.KernelELF, ro.Expected = prof.recorder(), devs.KernelELF, p.Expected
	// --perf measures device cycles with the runtime's profiler, case by
	// case; --profile's profiler records the whole run instead.
	ro.Cycles, ro.Warnf = ro.Perf.Runs > 0 && prof == nil, warnf
	out, err := Run(ctx, devs.List, p.Planned, ro)
	if err != nil {
		return nil, err
	}
	if ph := out.Report.Phases; ph != nil {
		ph.BootNS = boot.Nanoseconds()
		ph.close(time.Since(start))
	}
	for _, e := range out.Bad {
		if o.Bad != nil {
			o.Bad(e)
		}
	}
	ex = &Executed{Outcome: out}
	if len(out.Report.Results) == 0 && len(out.Report.Faults) == 0 && len(p.Bad)+len(out.Bad) > 0 && p.Shard == nil {
		return ex, nil // no case could run: nothing to show
	}
	ex.Ran = true
	for _, w := range out.Warnings {
		warnf("%s", w)
	}
	// Files are written after the run; a failure there still gives the
	// results first.
	if err := prof.write(ctx); err != nil && out.LateErr == nil {
		out.LateErr = err
	} else if err == nil && ro.Perf.Runs > 0 {
		// --profile with --perf: the cycles come from DIR's trace.
		traced, err := prof.launches(devs.List[0].Info().Props.FrequencyMHz)
		if err == nil && traced != nil {
			err = out.traceCycles(traced)
		}
		if err != nil {
			warnf("%v", err)
		}
	}
	return ex, nil
}

func quiet(f func(format string, args ...any)) func(format string, args ...any) {
	if f == nil {
		return func(string, ...any) {}
	}
	return f
}

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/runner"
)

// caseOutcome is what running one case gives: its results, or the
// kernel fault that stopped it, or an error that stops the whole run.
type caseOutcome struct {
	results []runOpResult
	perf    []runOpPerf
	fault   *runOpFault
	// err stops the run (a worker failure, a timeout).
	err error
	// bad is an input error of this case alone (its data cannot be read
	// or generated): reported, and the other cases still run.
	bad error
	// lateErr is a --save-outputs failure: reported after the results.
	lateErr error
}

// caseRun is what every case of a run shares.
type caseRun struct {
	f         *factory
	opts      *runOpOptions
	m         *abi.Manifest
	kernelELF func(string) ([]byte, error)
	trace     *exec.TraceRecorder
	// saveDirs is the --save-outputs directory of each case ("" for none).
	saveDirs []string
}

// planCases plans every case without its data (planning needs only types
// and shapes): the plans say which kernels the run needs and what
// --explain shows; each case is built again with its data when it runs
// (runCase), so only the cases running hold memory. A case that is bad
// input goes to bad and the others are still planned.
func planCases(f *factory, cases []*graph.Case, m *abi.Manifest, opts *runOpOptions, bad *badCases) ([]runOpCase, error) {
	var planned []runOpCase
	for _, c := range cases {
		if opts.SeedSet {
			c.Seed = opts.Seed
		}
		rc, err := planCase(context.Background(), c, m, opts, false)
		if err != nil {
			if exitCode(err) == exitUsage {
				bad.add(f, err)
				continue
			}
			return nil, err
		}
		planned = append(planned, rc)
	}
	return planned, nil
}

func planCase(ctx context.Context, c *graph.Case, m *abi.Manifest, opts *runOpOptions, withData bool) (runOpCase, error) {
	pc, err := runner.PlanCase(ctx, c, runner.PlanOptions{Manifest: m, Uberkernel: opts.Uberkernel, ShireMask: opts.ShireMask}, withData)
	if err != nil {
		return runOpCase{}, err
	}
	return runOpCase{c: c, g: pc.Graph, p: pc.Plan}, nil
}

// runCase builds case c with its data, runs it on dev and judges it.
func (cr *caseRun) runCase(ctx context.Context, dev driver.Device, c *graph.Case, saveDir string, job string) caseOutcome {
	rc, err := planCase(ctx, c, cr.m, cr.opts, true)
	if err != nil {
		if ctx.Err() != nil { // interrupted, or out of time, while generating inputs
			return caseOutcome{err: timeoutCause(ctx, err)}
		}
		if exitCode(err) == exitUsage {
			return caseOutcome{bad: err}
		}
		return caseOutcome{err: err}
	}
	cr.f.logf("%srunning %s (%d nodes, %d steps)", job, rc.c.Name, len(rc.g.Nodes), len(rc.p.Steps))
	eo := exec.Options{Trace: cr.trace, KernelELF: cr.kernelELF}
	if rc.c.Tolerance.NMSE != nil {
		eo.MaxNMSE = *rc.c.Tolerance.NMSE
	}
	if rc.c.Tolerance.GraphNMSE != nil {
		eo.GraphNMSE = *rc.c.Tolerance.GraphNMSE
	}
	if cr.opts.NMSE > 0 {
		eo.MaxNMSE = cr.opts.NMSE
	}
	if cr.opts.Perf {
		eo.Perf = exec.PerfOptions{Warmup: cr.opts.PerfWarmup, Runs: cr.opts.PerfRuns}
	}
	res, err := exec.Run(ctx, dev, rc.p, eo)
	if err != nil {
		if isWorkerFailure(err) {
			return caseOutcome{err: fmt.Errorf("%s: %w", rc.c.Name, err)}
		}
		if ctx.Err() != nil {
			if cause := timeoutCause(ctx, nil); cause != nil {
				return caseOutcome{err: cause}
			}
		}
		var kf *exec.KernelFaultError
		if errors.As(err, &kf) {
			// The device stays usable after a kernel error: record the
			// fault and go on with the next case.
			return caseOutcome{fault: &runOpFault{Case: rc.c.Name, Step: kf.Step, Errors: kf.Errors}}
		}
		return caseOutcome{err: fmt.Errorf("%s: %w", rc.c.Name, err)}
	}
	var out caseOutcome
	for _, o := range res.Outputs {
		r := newRunOpResult(rc.c, o)
		if rc.c.Tolerance.MaxAbs != nil && r.Status == exec.StatusPass && o.Compare.MaxAbsErr > *rc.c.Tolerance.MaxAbs {
			r.Status, r.Failure, r.Detail = exec.StatusFail, "max_abs", fmt.Sprintf("max abs error %g > %g", o.Compare.MaxAbsErr, *rc.c.Tolerance.MaxAbs)
		}
		out.results = append(out.results, r)
	}
	for _, pr := range res.Perf {
		out.perf = append(out.perf, newRunOpPerf(rc.c.Name, pr))
	}
	if saveDir != "" {
		out.lateErr = saveOutputs(saveDir, rc, res.Outputs)
	}
	return out
}

// timeoutCause is the --timeout error that ended ctx, or err when ctx
// ended otherwise (Ctrl-C).
func timeoutCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, driver.ErrTimeout) {
		return cause
	}
	return err
}

// runCases runs the cases on the devices, one job per device, each job
// taking the next case in input order; the outcomes are in input order
// whatever order the jobs finish in. An error that stops the run (err of
// an outcome) stops the other jobs too, and is returned: the first one
// that happened.
func (cr *caseRun) runCases(ctx context.Context, devs []driver.Device, cases []*graph.Case) ([]caseOutcome, error) {
	outcomes := make([]caseOutcome, len(cases))
	if len(devs) == 1 {
		for i, c := range cases {
			outcomes[i] = cr.runCase(ctx, devs[0], c, cr.saveDirs[i], "")
			if outcomes[i].err != nil {
				return outcomes, outcomes[i].err
			}
		}
		return outcomes, nil
	}
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range cases {
			select {
			case next <- i:
			case <-jctx.Done():
				return
			}
		}
	}()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for j, dev := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := fmt.Sprintf("job %d: ", j)
			for i := range next {
				o := cr.runCase(jctx, dev, cases[i], cr.saveDirs[i], job)
				outcomes[i] = o
				if o.err != nil {
					once.Do(func() { firstErr = o.err; cancel(o.err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	return outcomes, firstErr
}

// jobRunDir is job j's run directory when --run-dir DIR is given for
// several jobs: DIR/job<j>, so that each emulator has its own logs.
func jobRunDir(dir string, j, jobs int) string {
	if dir == "" || jobs == 1 {
		return dir
	}
	return filepath.Join(dir, fmt.Sprintf("job%d", j))
}

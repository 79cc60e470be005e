package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/expect"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/verdict"
)

// Report is the typed result of a run: what et run-op prints in every
// format (schema et.run-op/v1).
type Report struct {
	Schema  string `json:"schema"`
	Backend string `json:"backend"`
	Device  string `json:"device"`
	// Numerics says what computed the outputs: "device" (sysemu, pcie),
	// or "reference" on the reference device, where the outputs are et's
	// own reference math behind the ABI: there the run checks the
	// dispatch and the params bytes (ABIChecked), not device numerics,
	// and --perf times host code.
	Numerics string `json:"numerics"`
	// ABIChecked counts the kernel runs whose params the device decoded
	// and that equal the plan's field by field (reference device only).
	ABIChecked int      `json:"abi_checked"`
	Results    []Result `json:"results"`
	Perf       []Timing `json:"perf,omitempty"`
	// Launches are, with --perf, every launch of the cases' judged runs
	// in order (each node that launches, fused nodes together), with
	// device cycles where the device's runtime has a profiler.
	Launches []Launch `json:"launches,omitempty"`
	// Phases split the run's wall time (with --perf).
	Phases *Phases `json:"phases,omitempty"`
	// Faults are the kernel faults (stream errors) that stopped a case.
	Faults []Fault `json:"faults,omitempty"`
	// ABIMismatches are the launches whose params the device decoded
	// differently from the plan (checked on the reference device, which
	// decodes them itself): such a case stops there.
	ABIMismatches []ABIMismatch `json:"abi_mismatches,omitempty"`
	// Baseline compares the run's device cycles with an earlier run's
	// (--baseline, --baseline-kernels).
	Baseline *Baseline `json:"baseline,omitempty"`
	// Shard says which part of a sharded run (--shard) this is; an
	// unsharded or merged run has none.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Counts are the outputs per status (Count fills them when the report
	// is written).
	Counts *Counts `json:"counts,omitempty"`
}

// Counts are a report's outputs per status: an XFAIL, SKIP or FALLBACK
// output is not counted as passed, nor as failed.
type Counts struct {
	Outputs  int `json:"outputs"`
	Pass     int `json:"pass"`
	Fail     int `json:"fail"`
	Fallback int `json:"fallback"`
	Skip     int `json:"skip"`
	XFail    int `json:"xfail"`
	XPass    int `json:"xpass"`
}

// Count counts the results per status.
func (r *Report) Count() Counts {
	c := Counts{Outputs: len(r.Results)}
	for _, x := range r.Results {
		switch x.Status {
		case verdict.Pass:
			c.Pass++
		case verdict.Fail:
			c.Fail++
		case verdict.Fallback:
			c.Fallback++
		case verdict.Skip:
			c.Skip++
		case verdict.XFail:
			c.XFail++
		case verdict.XPass:
			c.XPass++
		}
	}
	return c
}

// EmptyReport is the report of a run without cases (an empty shard):
// nothing runs, no device is opened (booting an emulator for nothing),
// and the numerics are those the backend would give.
func EmptyReport(backend string) Report {
	numerics := "device"
	if !registry.Native(backend) {
		numerics = "reference"
	}
	return Report{Schema: ReportSchema, Backend: backend, Numerics: numerics, Results: []Result{}}
}

// ABIMismatch is a launch whose decoded params differ from the planned
// ones, field by field.
type ABIMismatch struct {
	Case   string          `json:"case"`
	Step   string          `json:"step"`
	Kernel string          `json:"kernel"`
	Fields []abi.FieldDiff `json:"fields"`
}

// ReportSchema is the schema of Report.
const ReportSchema = "et.run-op/v1"

// Failed reports whether the report is a negative verdict: an output
// failed (or passed against an expected failure), a kernel faulted, or
// a launch's cycles regressed against the baseline.
func (r *Report) Failed() bool {
	if len(r.Faults) > 0 || len(r.ABIMismatches) > 0 || (r.Baseline != nil && r.Baseline.Regressions > 0) {
		return true
	}
	for _, x := range r.Results {
		if x.Status.Failed() {
			return true
		}
	}
	return false
}

// Result is the verdict on one output of a case.
type Result struct {
	Case   string         `json:"case"`
	Output string         `json:"output"`
	Node   string         `json:"node"`
	Op     string         `json:"op"`
	Kernel string         `json:"kernel"`
	Fusion string         `json:"fusion,omitempty"`
	Status verdict.Status `json:"status"`
	NMSE   Float          `json:"nmse"`
	// Failure is the check that failed (ops.FailNaN "nan", "inf_mismatch",
	// "nmse", "max_abs"...); nmse is null in JSON when it is NaN.
	Failure   string  `json:"failure,omitempty"`
	MaxNMSE   float64 `json:"max_nmse"`
	MaxAbsErr Float   `json:"max_abs_err"`
	TimeNS    int64   `json:"time_ns"`
	// DriftNMSE is the NMSE of the output against the reference math
	// chained from the leaves (the end-to-end error up to this output);
	// DriftMaxNMSE is the case's graph_nmse tolerance, when it states one
	// (drift is then part of the verdict).
	DriftNMSE    Float   `json:"drift_nmse"`
	DriftMaxNMSE float64 `json:"drift_max_nmse,omitempty"`
	// DriftFailure is the drift check that failed or could not be
	// measured ("nan", ...), as Failure is for the NMSE.
	DriftFailure string `json:"drift_failure,omitempty"`
	Detail       string `json:"detail,omitempty"`
	// Reasons are the failed supports_op conditions of a fallback: code,
	// subject, values and the sentence.
	Reasons []plan.Reason `json:"reasons,omitempty"`
	// Expected is the file:line of the --expected-failures entry that
	// lists this output.
	Expected string `json:"expected_failure,omitempty"`
}

// Timing is the --perf timing of one launch segment of a case.
type Timing struct {
	Case   string   `json:"case"`
	Kernel string   `json:"kernel"`
	Nodes  []string `json:"nodes"`
	Runs   int      `json:"runs"`
	// Batch is how many launches each timed run made back to back (1, or
	// more for launches under 10 µs); the times are per launch.
	Batch int   `json:"batch"`
	MedNS int64 `json:"median_ns"`
	MinNS int64 `json:"min_ns"`
	MaxNS int64 `json:"max_ns"`
	Flops int64 `json:"flops"`
	Bytes int64 `json:"bytes"`
	// Clock is "device" (launch to sync on sysemu or a card) or "host"
	// (the reference device runs its kernels on this CPU).
	Clock string `json:"clock"`
	// FlopsPerS and BytesPerS are the median rates in base units (tables
	// show GFLOP/s and GB/s); FlopsPerS is omitted for ops without a flop
	// count (test-backend-ops counts flops for MUL_MAT and FLASH_ATTN_EXT).
	FlopsPerS float64 `json:"flops_per_s,omitempty"`
	BytesPerS float64 `json:"bytes_per_s"`
	// MedCycles, MinCycles and MaxCycles are the device's execution
	// cycles of the timed launches (median, fastest, slowest) from the
	// runtime's profiler: 0 when not measured (the reference device, or a
	// trace that could not be matched). MedDeviceNS is the median in ns
	// at the device clock FreqMHz.
	MedCycles   uint64 `json:"median_cycles,omitempty"`
	MinCycles   uint64 `json:"min_cycles,omitempty"`
	MaxCycles   uint64 `json:"max_cycles,omitempty"`
	MedDeviceNS int64  `json:"median_device_ns,omitempty"`
	FreqMHz     uint32 `json:"frequency_mhz,omitempty"`
	// Shires is how many compute shires the segment launched on.
	Shires int `json:"shires,omitempty"`
	// Efficiency is the segment's work per device cycle against the peak
	// of the shires launched (with cycles only).
	*Efficiency
}

// Fault is a kernel fault that stopped a case: the step and the decoded
// stream errors (DeviceErrorCode, per-hart contexts).
type Fault struct {
	Case   string               `json:"case"`
	Step   string               `json:"step"`
	Errors []driver.StreamError `json:"errors"`
}

// Options are the choices of a run that every case shares.
type Options struct {
	Plan PlanOptions
	// Backend names the backend in the report and selects the
	// expected-failure entries that apply.
	Backend string
	// NMSE overrides every output's NMSE limit when > 0.
	NMSE float64
	// Perf times every launch segment when Runs > 0.
	Perf exec.PerfOptions
	// Trace records the run in the runtime's trace format.
	Trace *exec.TraceRecorder
	// Cycles measures every launch in device cycles with the runtime's
	// profiler, case by case, on devices that have one (--perf without
	// --profile; cycles.go).
	Cycles bool
	// Warnf reports a warning (nil: dropped).
	Warnf func(format string, args ...any)
	// KernelELF serves kernel ELFs to devices that load them.
	KernelELF func(name string) ([]byte, error)
	// SaveOutputs, when set, is the directory every output is written
	// into as .npy (a sub-directory per case when there are several).
	SaveOutputs string
	// SaveInputs, when set, is the directory every case's inputs are
	// written into as it runs (SaveInputs; a sub-directory per case when
	// there are several), before it is executed.
	SaveInputs string
	// Expected is the expected-failures set (nil: none).
	Expected *expect.Set
	// MaxHostMemory is --max-host-memory: the host memory the cases
	// running at once may need together (hostMemory), when less than
	// MemAvailable at the start; 0: MemAvailable.
	MaxHostMemory uint64
	// Logf reports progress (nil: quiet).
	Logf func(format string, args ...any)
	// Progress, when set, is told as each case starts and ends, from the
	// jobs' goroutines (it must be safe for concurrent use).
	Progress func(CaseProgress)

	// mem is the host memory the run's jobs share (Run makes it).
	mem *hostMemory
}

// CaseProgress is a case starting (Done false, Step nil), a step of it
// starting (Step set: a launch, a fallback, a perf timing), or its end.
type CaseProgress struct {
	// Index is the case's place in the run (0-based), of Total.
	Index, Total int
	Name         string
	// Job names the device a case runs on when there are several.
	Job  string
	Done bool
	Step *exec.StepProgress
	// Results are the ended case's outputs; Faulted says a kernel fault
	// or an ABI mismatch stopped it.
	Results []Result
	Faulted bool
}

func (o *Options) warnf(format string, args ...any) {
	if o.Warnf != nil {
		o.Warnf(format, args...)
	}
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Outcome is what a run gives besides its report.
type Outcome struct {
	Report Report
	// Bad are the input errors of single cases whose data could not be
	// read or generated: the other cases still ran.
	Bad []error
	// LateErr is the first failure to write a requested file
	// (--save-outputs), reported after the results.
	LateErr error
	// Warnings are expected-failure entries that matched nothing.
	Warnings []string
	// Spans are, per planned case in order, its entries in the report.
	Spans []Span
	// runs are, per case that reached the device, its launches and where
	// its rows are in the report (for the cycles of a --profile trace).
	runs []caseRun
}

// caseOutcome is what running one case gives: its results, or the
// kernel fault that stopped it, or an error that stops the whole run.
type caseOutcome struct {
	// ran is the case's run on the device (nil: it did not complete);
	// stopped says it stopped on the device after launches (how many is
	// unknown).
	ran      *exec.Result
	stopped  bool
	props    driver.Props
	results  []Result
	perf     []Timing
	launches []Launch
	phases   Phases
	fault    *Fault
	abi      *ABIMismatch
	// abiChecked counts the kernel runs whose decoded params were checked.
	abiChecked int
	// matched are the expected-failure entries its outputs matched.
	matched []*expect.Entry
	// err stops the run (a worker failure, a timeout).
	err error
	// bad is an input error of this case alone.
	bad     error
	lateErr error
}

// Run runs the planned cases on the devices, one job per device, each job
// taking the next case in input order; the results are in input order
// whatever order the jobs finish in. Each case's plan runs as it was
// planned (and explained), its leaves bound to the case's data only
// while it runs, so only the cases running hold their data. An error
// that stops the run (a worker failure, a timeout, an interrupt) stops
// the other jobs too and is returned: the first one that happened.
func Run(ctx context.Context, devs []driver.Device, planned []*Planned, o Options) (*Outcome, error) {
	if len(devs) == 0 {
		return nil, errors.New("runner: no device")
	}
	saveDirs, inputDirs := caseDirs(o.SaveOutputs, planned), caseDirs(o.SaveInputs, planned)
	o.mem = newHostMemory(o.MaxHostMemory)
	outcomes, err := runCases(ctx, devs, planned, func(ctx context.Context, dev driver.Device, i int, job string) caseOutcome {
		ev := CaseProgress{Index: i, Total: len(planned), Name: planned[i].Case.Name, Job: job}
		if o.Progress != nil {
			o.Progress(ev)
		}
		var step func(exec.StepProgress)
		if o.Progress != nil {
			step = func(s exec.StepProgress) {
				sev := ev
				sev.Step = &s
				o.Progress(sev)
			}
		}
		c := runCase(ctx, dev, planned[i], saveDirs[i], inputDirs[i], job, step, &o)
		if o.Progress != nil && c.err == nil {
			ev.Done, ev.Results, ev.Faulted = true, c.results, c.fault != nil || c.abi != nil
			o.Progress(ev)
		}
		return c
	})
	if err != nil {
		return nil, err
	}
	out := &Outcome{Report: Report{Schema: ReportSchema, Backend: o.Backend, Device: devs[0].Info().Name, Numerics: "device", Results: []Result{}}}
	if o.Perf.Runs > 0 {
		out.Report.Phases = &Phases{}
	}
	clock := "device"
	if devs[0].Info().Kind == driver.KindRef {
		out.Report.Numerics, clock = "reference", "host"
	}
	if len(devs) > 1 {
		out.Report.Device = fmt.Sprintf("%d %s devices", len(devs), o.Backend)
	}
	for _, c := range outcomes {
		out.Spans = append(out.Spans, c.span())
		switch {
		case c.ran != nil:
			out.runs = append(out.runs, caseRun{res: c.ran, props: c.props, launch: len(out.Report.Launches), perf: len(out.Report.Perf)})
		case c.stopped:
			out.runs = append(out.runs, caseRun{}) // launched, how often unknown
		}
		out.Report.Results = append(out.Report.Results, c.results...)
		for _, t := range c.perf {
			t.Clock = clock
			out.Report.Perf = append(out.Report.Perf, t)
		}
		out.Report.Launches = append(out.Report.Launches, c.launches...)
		if p := out.Report.Phases; p != nil {
			p.plus(c.phases)
		}
		out.Report.ABIChecked += c.abiChecked
		if c.fault != nil {
			out.Report.Faults = append(out.Report.Faults, *c.fault)
		}
		if c.abi != nil {
			out.Report.ABIMismatches = append(out.Report.ABIMismatches, *c.abi)
		}
		if c.bad != nil {
			out.Bad = append(out.Bad, c.bad)
		}
		if out.LateErr == nil {
			out.LateErr = c.lateErr
		}
	}
	out.Warnings = unusedExpected(o.Expected, o.expectRun(), outcomes, out.Report.Results)
	return out, nil
}

// caseDirs are the per-case directories under dir ("" for none): dir
// itself for one case, a sub-directory named after each case for several.
func caseDirs(dir string, planned []*Planned) []string {
	dirs := make([]string, len(planned))
	if dir == "" {
		return dirs
	}
	names := uniqueNames{}
	for i, pc := range planned {
		dirs[i] = dir
		if len(planned) > 1 {
			dirs[i] = filepath.Join(dir, names.name(pc.Case.Name))
		}
	}
	return dirs
}

func runCases(ctx context.Context, devs []driver.Device, planned []*Planned, one func(context.Context, driver.Device, int, string) caseOutcome) ([]caseOutcome, error) {
	outcomes := make([]caseOutcome, len(planned))
	if len(devs) == 1 {
		for i := range planned {
			outcomes[i] = one(ctx, devs[0], i, "")
			if outcomes[i].err != nil {
				return nil, outcomes[i].err
			}
		}
		return outcomes, nil
	}
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range planned {
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
				c := one(jctx, dev, i, job)
				outcomes[i] = c
				if c.err != nil {
					once.Do(func() { firstErr = c.err; cancel(c.err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return outcomes, nil
}

// isInputError reports the errors internal parsers mark as bad input.
func isInputError(err error) bool {
	var ie interface{ InputError() }
	return errors.As(err, &ie)
}

// runCase runs the planned case pc on dev with its data (bound to the
// plan's leaves for the time it runs) and judges it; step, when set, is
// told as each of its steps starts.
func runCase(ctx context.Context, dev driver.Device, pc *Planned, saveDir, inputDir, job string, step func(exec.StepProgress), o *Options) caseOutcome {
	c := pc.Case
	o.logf("%sgenerating the inputs of %s", job, c.Name)
	hostDone := registry.HostWork(ctx) // --timeout counts device work only
	bindStart := time.Now()
	unbind, err := pc.bind(ctx, o.mem)
	inputs := time.Since(bindStart)
	hostDone()
	if err != nil {
		var nh *ops.NoHostMathError
		switch {
		case ctx.Err() != nil: // interrupted, or out of time, while generating inputs
			return caseOutcome{err: TimeoutCause(ctx, err)}
		case errors.As(err, &nh):
			return skipped(c, nil, nh, o)
		case isInputError(err):
			return caseOutcome{bad: err}
		}
		return caseOutcome{err: err}
	}
	defer unbind()
	var lateErr error
	if inputDir != "" {
		lateErr = SaveInputs(ctx, inputDir, pc)
	}
	o.logf("%srunning %s (%d nodes, %d steps)", job, c.Name, len(pc.Graph.Nodes), len(pc.Plan.Steps))
	eo := exec.Options{Trace: o.Trace, KernelELF: o.KernelELF, Step: step}
	if c.Tolerance.NMSE != nil {
		eo.MaxNMSE = *c.Tolerance.NMSE
	}
	if c.Tolerance.GraphNMSE != nil {
		eo.GraphNMSE = *c.Tolerance.GraphNMSE
	}
	if o.NMSE > 0 {
		eo.MaxNMSE = o.NMSE
	}
	eo.Perf = o.Perf
	cyc, dev, err := startCycles(ctx, dev, o)
	if err != nil {
		return caseOutcome{err: fmt.Errorf("%s: %w", c.Name, err)}
	}
	res, err := exec.Run(ctx, dev, pc.Plan, eo)
	if err != nil && cyc != nil {
		cyc.stopQuietly(ctx)
	}
	if err != nil {
		var kf *exec.KernelFaultError
		var nh *ops.NoHostMathError
		var am *exec.ABIMismatchError
		switch {
		case registry.IsWorkerFailure(err):
			return caseOutcome{err: fmt.Errorf("%s: %w", c.Name, err)}
		case ctx.Err() != nil && TimeoutCause(ctx, nil) != nil:
			return caseOutcome{err: TimeoutCause(ctx, nil)}
		case errors.As(err, &kf):
			// The device stays usable after a kernel error: record the
			// fault and go on with the next case.
			return caseOutcome{fault: &Fault{Case: c.Name, Step: kf.Step, Errors: kf.Errors}, lateErr: lateErr, stopped: true}
		case errors.As(err, &am):
			return caseOutcome{abi: &ABIMismatch{Case: c.Name, Step: am.Step, Kernel: am.Kernel, Fields: am.Diffs}, lateErr: lateErr, stopped: true}
		case errors.As(err, &nh):
			out := skipped(c, pc, nh, o)
			out.lateErr, out.stopped = lateErr, true
			return out
		}
		return caseOutcome{err: fmt.Errorf("%s: %w", c.Name, err)}
	}
	out := caseOutcome{abiChecked: res.ABIChecked, lateErr: lateErr, ran: res, props: dev.Info().Props}
	for _, or := range res.Outputs {
		ev := or.Evidence()
		ev.MaxAbs = c.Tolerance.MaxAbs
		out.results = append(out.results, out.judged(newResult(c, or), ev, o))
	}
	props := dev.Info().Props
	for _, pr := range res.Perf {
		t := newTiming(c.Name, pr)
		t.Shires = shiresOf(pr.ShireMask, props)
		out.perf = append(out.perf, t)
	}
	if o.Perf.Runs > 0 {
		out.launches = newLaunches(c.Name, res, props)
		out.phases.add(inputs, res.Phases)
	}
	if cyc != nil {
		traced, err := cyc.stop(ctx)
		if err == nil {
			err = assignCycles(traced, res, out.launches, out.perf)
		}
		if err != nil {
			o.warnf("%s: %v", c.Name, err)
		}
		for i := range out.perf {
			out.perf[i].Efficiency = efficiency(&out.perf[i], props)
		}
	}
	if saveDir != "" && out.lateErr == nil {
		out.lateErr = saveOutputs(ctx, saveDir, res.Outputs)
	}
	return out
}

// skipped is the outcome of a case et cannot judge: every output SKIP
// with the reason.
func skipped(c *graph.Case, pc *Planned, nh *ops.NoHostMathError, o *Options) caseOutcome {
	var out caseOutcome
	for _, name := range c.Outputs {
		r := Result{Case: c.Name, Output: name, Node: name}
		if pc != nil {
			if v, ok := pc.Graph.Lookup(name); ok && pc.Graph.Values[v].Node >= 0 {
				r.Op = string(pc.Graph.Nodes[pc.Graph.Values[v].Node].Op)
			}
		}
		out.results = append(out.results, out.judged(r, verdict.Evidence{Skip: nh.Error()}, o))
	}
	return out
}

// judged gives result r its verdict (verdict.Judge) from the evidence and
// the expected-failures entry that lists it, which it records as matched.
func (c *caseOutcome) judged(r Result, ev verdict.Evidence, o *Options) Result {
	if e := o.Expected.Match(o.expectRun(), r.Case, r.Output); e != nil {
		c.matched = append(c.matched, e)
		r.Expected = e.Where()
		ev.Expected = &verdict.Expected{Where: e.Where(), Why: e.Why, Measured: e.Measured}
	}
	v := verdict.Judge(ev)
	r.Status, r.Failure, r.Detail = v.Status, v.Failure, v.Detail
	return r
}

// expectRun is the run expected failures are matched against.
func (o *Options) expectRun() expect.Run {
	return expect.Run{Backend: o.Backend, Uberkernel: o.Plan.Uberkernel}
}

// TimeoutCause is the --timeout error that ended ctx, or err when ctx
// ended otherwise (Ctrl-C).
func TimeoutCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, driver.ErrTimeout) {
		return cause
	}
	return err
}

func newResult(c *graph.Case, o exec.OutputResult) Result {
	r := Result{Case: c.Name, Output: o.Output, Node: o.Node, Op: string(o.Op), Kernel: o.Kernel, Fusion: o.Fusion,
		NMSE: finite(o.Compare.NMSE), MaxNMSE: o.Compare.MaxNMSE, MaxAbsErr: finite(o.Compare.MaxAbsErr),
		TimeNS: o.TimeNS, Reasons: o.Reasons, DriftNMSE: finite(o.Drift.NMSE), DriftFailure: o.Drift.Failure}
	if o.DriftJudged {
		r.DriftMaxNMSE = o.Drift.MaxNMSE
	}
	return r
}

// finite keeps ±Inf (an output a kernel never wrote, all zeros) out of
// JSON, which cannot carry it: the largest float of its sign. NaN stays
// (Float writes it as null).
func finite(x float64) Float {
	switch {
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return Float(x)
}

// Float is an error measure that may be NaN (0/0, or an output holding
// NaN): JSON has no NaN, so it is written as null, and a CSV cell is then
// empty; YAML writes .nan. A script reading it never takes NaN for 0.
type Float float64

// MarshalJSON writes NaN as null.
func (f Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// UnmarshalJSON reads null as NaN (a shard report merged).
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(f))
}

// MarshalText is the CSV cell: empty for NaN.
func (f Float) MarshalText() ([]byte, error) {
	if math.IsNaN(float64(f)) {
		return nil, nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// MarshalYAML keeps the value a YAML float (.nan for NaN), not the text
// MarshalText gives.
func (f Float) MarshalYAML() (any, error) { return float64(f), nil }

func newTiming(name string, p exec.PerfResult) Timing {
	return Timing{Case: name, Kernel: p.Kernel, Nodes: p.Nodes, Runs: p.Runs, Batch: p.Batch, MedNS: p.MedNS, MinNS: p.MinNS, MaxNS: p.MaxNS,
		Flops: p.Flops, Bytes: p.Bytes, FlopsPerS: p.GFLOPS() * 1e9, BytesPerS: p.GBPS() * 1e9}
}

// unusedExpected warns of each expected-failures entry that applies to
// this run and names a case that ran but matched none of its outputs.
func unusedExpected(set *expect.Set, run expect.Run, outcomes []caseOutcome, results []Result) []string {
	if set == nil {
		return nil
	}
	matched := map[*expect.Entry]bool{}
	for _, c := range outcomes {
		for _, e := range c.matched {
			matched[e] = true
		}
	}
	ran := map[string]bool{}
	for _, r := range results {
		ran[r.Case] = true
	}
	var warns []string
	for _, e := range set.Unused(run, ran, matched) {
		warns = append(warns, fmt.Sprintf("%s: expected failure %s/%s matches no output of case %s in this run", e.Where(), e.Case, e.Output, e.Case))
	}
	return warns
}

// uniqueNames gives each case a distinct, safe directory name.
type uniqueNames map[string]int

func (u uniqueNames) name(s string) string {
	n := SafeName(s)
	u[n]++
	if c := u[n]; c > 1 {
		n = fmt.Sprintf("%s_%d", n, c)
	}
	return n
}

// SafeName makes a case or output name usable as a file name: letters,
// digits, '-', '_' and '.' are kept, anything else becomes '_', and a name
// of dots only ("." or "..") is replaced.
func SafeName(s string) string {
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	if strings.Trim(n, ".") == "" {
		n = strings.Repeat("_", max(len(n), 1))
	}
	return n
}

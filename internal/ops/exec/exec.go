package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/verdict"
)

// Options control a run.
type Options struct {
	// MaxNMSE overrides the per-op NMSE limit for every output when > 0.
	MaxNMSE float64
	// GraphNMSE, when > 0, bounds the drift of every output (see
	// OutputResult.Drift): an output whose drift exceeds it fails even
	// when its node passes. 0 reports drift without judging it.
	GraphNMSE float64
	// KernelELF returns the ELF bytes of a kernel for devices that need
	// them; nil means no ELF (the reference device knows kernels by name).
	KernelELF func(name string) ([]byte, error)
	// Perf, when Runs > 0, times every launch segment: Warmup untimed runs,
	// then Runs timed runs of launch + sync, and more while they add up to
	// less than MinTime.
	Perf PerfOptions
	// Now is the clock for timings (time.Now when nil).
	Now func() time.Time
	// Trace, when set, records the run in the runtime's trace format
	// (see TraceRecorder).
	Trace *TraceRecorder
	// Step, when set, is told as each step starts (a launch, a fallback
	// on the host, a launch's perf timing): on a slow device one launch
	// can take minutes, and a progress display names it.
	Step func(StepProgress)
}

// StepProgress is a step of a run starting: its setup (uploads, kernel
// loads), the Index-th (0-based) of Total launches and fallbacks, or with
// Timing, the perf timing of the Index-th of Total launches.
type StepProgress struct {
	Index, Total int
	// Kernel is the launch's kernel ("" for a fallback); Nodes the graph
	// nodes it computes.
	Kernel   string
	Nodes    []string
	Fallback bool
	Timing   bool
	// Setup is the allocation, upload and kernel loading before the
	// first launch (Index and Total 0).
	Setup bool
}

// String is the step as a progress line says it: "launch 2/5 KERNEL
// (node, ...)", "fallback 1/5 (node)", "timing 2/5 KERNEL (node)".
func (s StepProgress) String() string {
	what := "launch"
	switch {
	case s.Setup:
		return "uploading the inputs, loading the kernels"
	case s.Fallback:
		what = "fallback"
	case s.Timing:
		what = "timing"
	}
	str := fmt.Sprintf("%s %d/%d", what, s.Index+1, s.Total)
	if s.Kernel != "" {
		str += " " + s.Kernel
	}
	if len(s.Nodes) > 0 {
		str += " (" + strings.Join(s.Nodes, ", ") + ")"
	}
	return str
}

// step tells opts.Step, if set, that a step starts.
func (r *runner) step(s StepProgress) {
	if r.opts.Step != nil {
		r.opts.Step(s)
	}
}

// PerfOptions configure perf mode.
type PerfOptions struct {
	Warmup int
	Runs   int
	// MinTime, when > 0, keeps timing after Runs runs until the timed runs
	// add up to MinTime (at most MaxPerfRuns runs): a launch of a
	// microsecond is then timed thousands of times, warm, as ggml's
	// test-backend-ops perf does, while a slow one still runs Runs times.
	MinTime time.Duration
}

// MaxPerfRuns bounds the timed runs of one segment that MinTime asks for.
const MaxPerfRuns = 100000

// A launch that takes less than perfBatchBelow (its last warm-up run,
// timed) is timed in batches of launches back to back, each batch about
// perfBatchSpan long (at most perfBatchMax launches; the size checked by
// timing batches of it, see timeSegment), its time divided by
// its launches: as test-backend-ops perf times a graph of many copies of
// the op, and without the two clock reads of every launch, 40-80 ns each
// on a VM, which would be a third of a 0.2 µs launch.
const (
	perfBatchBelow = 10 * time.Microsecond
	perfBatchSpan  = 10 * time.Microsecond
	perfBatchMax   = 1000
	// perfBatchRounds bounds the timed batches that size a batch again.
	perfBatchRounds = 4
)

// OutputResult is the comparison of one graph output.
type OutputResult struct {
	// Output is the output value's name; Node the node that produced it
	// (the last node of a fused step names the step).
	Output string
	Node   string
	Op     ops.Op
	// Kernel is the kernel that computed it ("" for a fallback or a view
	// of an input).
	Kernel string
	Fusion string
	// Status is the verdict on the device's numbers (verdict.Judge of
	// Evidence): PASS, FAIL or FALLBACK.
	Status verdict.Status
	// Fallback: the node is unsupported by ggml-et and ran on the host.
	Fallback bool
	// Compare is the test-backend-ops style comparison of the output with
	// Want, the verdict.
	Compare ops.Comparison
	// Drift compares the output with the reference math chained from the
	// graph's leaves (Chained): the end-to-end error of the graph up to this output, device error
	// accumulated through every node before it. Its MaxNMSE is
	// Options.GraphNMSE, or 0 when drift is only reported.
	Drift ops.Comparison
	// DriftJudged is true when the drift took part in the verdict
	// (Options.GraphNMSE > 0).
	DriftJudged bool
	// TimeNS is the time of the step that produced the output (launch to
	// sync), in nanoseconds.
	TimeNS int64
	// Reasons are the unsupported conditions of a fallback.
	Reasons []plan.Reason
	// Got is the output as the device produced it; Want the reference it
	// was judged against: the reference math of its node on the device's
	// own inputs of that node, as test-backend-ops judges each node.
	Got  *ops.Tensor
	Want *ops.Tensor
	// Chained is the output's reference math chained from the leaves,
	// as the node that produced it left it (Drift compares with it).
	Chained *ops.Tensor
}

// PerfResult is the timing of one launch segment.
type PerfResult struct {
	// Kernel is the kernel launched (uberkernel for a batched segment).
	Kernel string
	// Nodes are the graph nodes the segment computes.
	Nodes []string
	Ops   []ops.Op
	// Runs is how many timed runs there were, each of Batch launches
	// (1, or more for launches under perfBatchBelow), and MinNS, MaxNS
	// and MedNS the fastest, slowest and median run, per launch.
	Runs  int
	Batch int
	MinNS int64
	MaxNS int64
	MedNS int64
	Flops int64
	Bytes int64
	// Untimed is how many launches the segment made before its timed
	// runs (warm-up, and batches that sized the batch); the Runs*Batch
	// timed launches follow them. A device's own record of the launches
	// (a runtime trace) is matched to the runs by these counts.
	Untimed int
	// ShireMask is the compute shire mask the segment launched on (0:
	// the device's whole mask).
	ShireMask uint32
}

// GFLOPS is the median throughput in GFLOP/s (0 when the ops have no flop count).
func (r PerfResult) GFLOPS() float64 {
	if r.MedNS <= 0 || r.Flops == 0 {
		return 0
	}
	return float64(r.Flops) / float64(r.MedNS)
}

// GBPS is the median bandwidth in GB/s.
func (r PerfResult) GBPS() float64 {
	if r.MedNS <= 0 {
		return 0
	}
	return float64(r.Bytes) / float64(r.MedNS)
}

// Result is the outcome of a run.
type Result struct {
	Outputs []OutputResult
	Perf    []PerfResult
	// Launches records every launch in execution order (for traces).
	Launches []LaunchRecord
	// ABIChecked counts the kernel runs whose params the device decoded
	// and the run found equal to the plan's, field by field (on a
	// DecodingDevice; 0 elsewhere).
	ABIChecked int
	// Phases is where the run's wall time went.
	Phases Phases
}

// Phases split the wall time of a Run: uploads (allocation, inputs,
// kernel loads), the judged launches, the perf runs' launches, downloads,
// and the rest (judging: the reference math, host fallbacks, comparing),
// in ns. They add up to the run's time.
type Phases struct {
	UploadNS   int64
	LaunchNS   int64
	PerfNS     int64
	DownloadNS int64
	JudgeNS    int64
}

// LaunchRecord is one kernel launch as the host saw it.
type LaunchRecord struct {
	Kernel     string
	Nodes      []string
	ParamsSize int
	// ShireMask is the launch's compute shire mask (0: the whole mask).
	ShireMask  uint32
	Start, End time.Time
}

// Evidence is what the output's verdict is decided from: the node's
// comparison, the drift when judged, whether it ran on the host. A case's
// own tolerances and expected failures are added by its run.
func (o *OutputResult) Evidence() verdict.Evidence {
	return verdict.Evidence{Fallback: o.Fallback, NMSEFailure: o.Compare.Failure, NMSEText: o.Compare.String(),
		DriftJudged: o.DriftJudged, DriftFailure: o.Drift.Failure, DriftText: o.Drift.String(), MaxAbsErr: o.Compare.MaxAbsErr}
}

// Passed reports whether every output passed (fallbacks count as passed).
func (r *Result) Passed() bool {
	for _, o := range r.Outputs {
		if o.Status.Failed() {
			return false
		}
	}
	return true
}

// KernelFaultError reports stream errors returned by the device.
type KernelFaultError struct {
	Step   string
	Errors []driver.StreamError
}

func (e *KernelFaultError) Error() string {
	msg := fmt.Sprintf("%s: device reported %d stream error(s)", e.Step, len(e.Errors))
	if len(e.Errors) > 0 {
		msg += ": " + e.Errors[0].Error()
	}
	return msg
}

// MaxNMSEFor is test-backend-ops' default NMSE limit for an op.
//
// A fused step is judged at the loosest limit of the ops it computes
// (StepMaxNMSE): MUL_MAT+ADD at MUL_MAT's 5e-4, as test-backend-ops'
// matmul-with-bias fusion tests are judged at a matmul tolerance
// (test_mul_mat_vec_fusion: 5e-3 for a whole fused FFN), and
// RMS_NORM+MUL at 1e-7 like test_rms_norm_mul_add.
func MaxNMSEFor(op ops.Op) float64 {
	switch op {
	case ops.OpMulMat, ops.OpFlashAttnExt, "mul_mat_id", "conv_2d", "im2col":
		return ops.MatMulMaxNMSE
	case ops.OpSoftMax:
		return ops.SoftMaxMaxNMSE
	}
	return ops.DefaultMaxNMSE
}

// StepMaxNMSE is the NMSE limit of a step: the loosest MaxNMSEFor of its
// nodes (a fused MUL_MAT+ADD gets MUL_MAT's).
func StepMaxNMSE(g *plan.Graph, s *plan.Step) float64 {
	limit := 0.0
	for _, ni := range s.Nodes {
		limit = max(limit, MaxNMSEFor(g.Nodes[ni].Op))
	}
	return limit
}

type runner struct {
	ctx context.Context
	dev driver.Device
	// decoder is dev when it decodes the params it runs (DecodingDevice).
	decoder DecodingDevice
	p       *plan.Plan
	opts    Options
	addr    map[int]driver.DevPtr // base value -> device buffer
	size    map[int]uint64
	kern    map[string]driver.KernelID
	res     *Result
	stepT   map[int]int64 // step -> ns
	j       *judge
	// chained holds each output's reference chained from the leaves.
	chained map[int]*ops.Tensor
}

// Run executes p on dev and judges every output the way test-backend-ops
// judges a node: the device's output against the reference math of its
// node applied to the device's own inputs of that node (downloaded around
// the launches, or the host's copy of what was uploaded). The drift of
// each output from the reference math chained from the leaves is
// reported beside it (and judged with Options.GraphNMSE). Device buffers
// are freed before it returns. A device that reports stream errors
// yields a *KernelFaultError.
func Run(ctx context.Context, dev driver.Device, p *plan.Plan, opts Options) (*Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	decoder, _ := dev.(DecodingDevice)
	if decoder != nil {
		decoder.TakeDecoded() // what earlier runs (perf repeats) left
	}
	if opts.Trace != nil {
		dev = opts.Trace.attach(dev, opts.Now)
	}
	r := &runner{ctx: ctx, dev: dev, decoder: decoder, p: p, opts: opts, addr: map[int]driver.DevPtr{}, size: map[int]uint64{},
		kern: map[string]driver.KernelID{}, res: &Result{}, stepT: map[int]int64{}}
	r.j = newJudge(p)
	defer r.freeAll()
	t0 := opts.Now()
	r.step(StepProgress{Setup: true})
	if err := r.alloc(); err != nil {
		return nil, err
	}
	if err := r.upload(); err != nil {
		return nil, err
	}
	if err := r.loadKernels(); err != nil {
		return nil, err
	}
	ph := &r.res.Phases
	ph.UploadNS = opts.Now().Sub(t0).Nanoseconds()
	if err := r.execute(); err != nil {
		return nil, err
	}
	err := r.localReferences()
	if err != nil {
		return nil, fmt.Errorf("reference math: %w", err)
	}
	if r.chained, err = chainedReference(ctx, p.Graph, r.j.chainedAt()); err != nil {
		return nil, fmt.Errorf("reference math: %w", err)
	}
	if err := r.compare(); err != nil {
		return nil, err
	}
	if opts.Perf.Runs > 0 {
		t := opts.Now()
		if err := r.perf(); err != nil {
			return nil, err
		}
		ph.PerfNS = opts.Now().Sub(t).Nanoseconds()
	}
	ph.JudgeNS = opts.Now().Sub(t0).Nanoseconds() - ph.UploadNS - ph.LaunchNS - ph.PerfNS - ph.DownloadNS
	return r.res, nil
}

// chainedReference runs the reference math of every node of g, chained
// from the leaves, and returns each graph output as it was right after
// the node that produced it, or after node at[output] when given (a later
// in-place node may overwrite an output's memory). It works in memory of
// its own: node results get fresh buffers and a leaf that an in-place
// node writes into is copied, so the graph's tensors are never written
// and a plan runs again with the same results.
func chainedReference(ctx context.Context, g *plan.Graph, at map[int]int) (map[int]*ops.Tensor, error) {
	mem := make(map[int][]byte) // base value -> its memory for this evaluation
	for _, n := range g.Nodes {
		if n.Info.View {
			continue
		}
		if b := g.Values[n.Out].Base; mem[b] == nil {
			if g.Values[b].Node < 0 {
				mem[b] = slices.Clone(g.Values[b].T.Buf) // a leaf written in place
			} else {
				mem[b] = make([]byte, g.Values[b].T.BufLen())
			}
		}
	}
	tensor := func(v int) *ops.Tensor {
		if buf, ok := mem[g.Values[v].Base]; ok {
			return header(g, v, buf)
		}
		return g.Values[v].T // a leaf nothing writes: read only
	}
	byNode := map[int][]int{} // node index -> outputs to capture after it
	out := map[int]*ops.Tensor{}
	snap := func(o int) {
		t := *tensor(o)
		t.Buf = slices.Clone(t.Buf)
		out[o] = &t
	}
	for _, o := range g.Outputs {
		if ni, ok := at[o]; ok {
			byNode[ni] = append(byNode[ni], o)
			continue
		}
		v := o
		for g.Values[v].Node >= 0 && g.Nodes[g.Values[v].Node].Info.View {
			v = g.Nodes[g.Values[v].Node].Src[0]
		}
		if ni := g.Values[v].Node; ni >= 0 {
			byNode[ni] = append(byNode[ni], o)
		} else {
			snap(o) // a view of a leaf
		}
	}
	for i, n := range g.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if n.Info.View {
			continue
		}
		srcs := make([]*ops.Tensor, len(n.Src))
		for k, s := range n.Src {
			srcs[k] = tensor(s)
		}
		if err := runNode(n, tensor(n.Out), srcs); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		for _, o := range byNode[i] {
			snap(o)
		}
	}
	return out, nil
}

func srcTensors(g *plan.Graph, n plan.Node) []*ops.Tensor {
	srcs := make([]*ops.Tensor, len(n.Src))
	for i, s := range n.Src {
		srcs[i] = g.Values[s].T
	}
	return srcs
}

// bases lists the values that own memory, in index order.
func bases(g *plan.Graph) []int {
	var out []int
	for i := range g.Values {
		if g.Values[i].Base == i {
			out = append(out, i)
		}
	}
	return out
}

func bufSize(t *ops.Tensor) uint64 {
	n := t.BufLen()
	if n == 0 {
		n = 1
	}
	return (n + 63) &^ 63
}

func (r *runner) alloc() error {
	align := uint64(r.dev.Info().Props.CacheLineBytes)
	if align == 0 {
		align = 64
	}
	for _, b := range bases(r.p.Graph) {
		t := r.p.Graph.Values[b].T
		sz := bufSize(t)
		ptr, err := r.dev.Malloc(r.ctx, sz, align)
		if err != nil {
			return fmt.Errorf("allocate %s (%d bytes): %w", r.p.Graph.Values[b].Name, sz, err)
		}
		r.addr[b], r.size[b] = ptr, sz
	}
	return nil
}

func (r *runner) freeAll() {
	keys := make([]int, 0, len(r.addr))
	for k := range r.addr {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		r.dev.Free(r.ctx, r.addr[k])
	}
}

// upload writes every leaf to the device and zeroes every other buffer
// (ggml-et clears buffers with memops; here a plain write).
func (r *runner) upload() error {
	g := r.p.Graph
	for _, b := range bases(g) {
		v := &g.Values[b]
		var data []byte
		if v.Node < 0 && !r.j.keep[b] && uint64(len(v.T.Buf)) == r.size[b] {
			data = v.T.Buf // a leaf, written as it is: Write copies it
		} else {
			data = make([]byte, r.size[b])
			if v.Node < 0 {
				copy(data, v.T.Buf)
			}
		}
		if err := r.dev.Write(r.ctx, r.addr[b], data); err != nil {
			return fmt.Errorf("upload %s: %w", v.Name, err)
		}
		if r.j.keep[b] {
			r.j.kept[b] = data
		}
	}
	return nil
}

func (r *runner) loadKernels() error {
	for _, name := range r.p.Kernels() {
		var elf []byte
		if r.opts.KernelELF != nil {
			b, err := r.opts.KernelELF(name)
			if err != nil {
				return fmt.Errorf("kernel %s: %w", name, err)
			}
			elf = b
		}
		id, err := r.dev.LoadKernel(r.ctx, name, elf)
		if err != nil {
			return fmt.Errorf("load kernel %s: %w", name, err)
		}
		r.kern[name] = id
	}
	return nil
}

func (r *runner) addrFunc() plan.AddrFunc {
	return func(base int) uint64 { return uint64(r.addr[base]) }
}

// execute runs the steps in order: segments on the device, fallbacks on
// the host. Around each it downloads what the judging needs (see judge).
func (r *runner) execute() error {
	segOf := map[int][]int{}
	for _, seg := range r.p.Segments() {
		segOf[seg[0]] = seg
	}
	total, done := len(segOf), 0
	for _, s := range r.p.Steps {
		if s.Kind == plan.StepFallback {
			total++
		}
	}
	for i := 0; i < len(r.p.Steps); i++ {
		s := &r.p.Steps[i]
		switch s.Kind {
		case plan.StepFallback:
			r.step(StepProgress{Index: done, Total: total, Nodes: r.nodeNames([]int{i}), Fallback: true})
			done++
			if err := r.snapshot(r.j.before[i], i, r.j.snapBefore); err != nil {
				return err
			}
			start := r.opts.Now()
			if err := r.fallback(s); err != nil {
				return err
			}
			r.stepT[i] = r.opts.Now().Sub(start).Nanoseconds()
			if err := r.snapshot(r.j.after[i], i, r.j.snapAfter); err != nil {
				return err
			}
		case plan.StepLaunch:
			seg, ok := segOf[i]
			if !ok {
				continue // inside a segment already run
			}
			if err := r.snapshot(r.j.before[i], i, r.j.snapBefore); err != nil {
				return err
			}
			r.step(StepProgress{Index: done, Total: total, Kernel: r.p.SegmentKernel(seg), Nodes: r.nodeNames(seg)})
			done++
			start := r.opts.Now()
			if err := r.launchSegment(seg, true); err != nil {
				return err
			}
			ns := r.opts.Now().Sub(start).Nanoseconds()
			r.res.Phases.LaunchNS += ns
			for _, si := range seg {
				r.stepT[si] = ns
			}
			i = seg[len(seg)-1]
			if err := r.snapshot(r.j.after[i], i, r.j.snapAfter); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshot downloads bases into into[{step, base}].
func (r *runner) snapshot(bases []int, step int, into map[[2]int][]byte) error {
	for _, b := range bases {
		buf, err := r.download(b)
		if err != nil {
			return err
		}
		into[[2]int{step, b}] = buf
	}
	return nil
}

func (r *runner) nodeNames(steps []int) []string {
	var names []string
	for _, si := range steps {
		for _, n := range r.p.Steps[si].Nodes {
			names = append(names, r.p.Graph.Nodes[n].Name)
		}
	}
	return names
}

// segLaunch is one segment ready to launch: its kernel, encoded params
// and launch options, and the device memory its uberkernel batch was
// uploaded to (freed by free).
type segLaunch struct {
	seg    []int
	names  []string
	kernel string
	id     driver.KernelID // kernel's, looked up once (0: not loaded)
	args   []byte
	opts   driver.LaunchOptions
	temps  []driver.DevPtr
}

// prepareSegment encodes one segment (a direct launch or an uberkernel
// batch, uploaded) for launching, once or many times (perf runs).
func (r *runner) prepareSegment(seg []int) (*segLaunch, error) {
	l := &segLaunch{seg: seg, names: r.nodeNames(seg),
		opts: driver.LaunchOptions{ShireMask: uint64(r.p.SegmentMask(seg)), Barrier: true}}
	first := &r.p.Steps[seg[0]]
	if r.p.Uberkernel && first.Batchable {
		batch := abi.NewBatch(r.p.Manifest)
		for _, si := range seg {
			s := &r.p.Steps[si]
			b, err := r.p.Encode(s, r.addrFunc())
			if err != nil {
				return nil, err
			}
			if _, err := batch.Add(s.Kernel, b); err != nil {
				return nil, err
			}
		}
		insts, blob := batch.InstBytes(), batch.Blob()
		ip, err := r.upTemp(insts)
		if err != nil {
			return nil, err
		}
		l.temps = append(l.temps, ip)
		bp, err := r.upTemp(blob)
		if err != nil {
			r.free(l)
			return nil, err
		}
		l.temps = append(l.temps, bp)
		l.kernel, l.id = plan.Uberkernel, r.kern[plan.Uberkernel]
		l.args = abi.EncodeLaunch(batch.Launch(uint64(ip), uint64(bp)))
		return l, nil
	}
	var err error
	l.kernel, l.id = first.Kernel, r.kern[first.Kernel]
	if l.args, err = r.p.Encode(first, r.addrFunc()); err != nil {
		return nil, err
	}
	return l, nil
}

// free releases the device memory of a prepared segment.
func (r *runner) free(l *segLaunch) {
	for _, t := range l.temps {
		r.dev.Free(r.ctx, t)
	}
	l.temps = nil
}

// launchSegment launches one segment and synchronizes.
func (r *runner) launchSegment(seg []int, record bool) error {
	l, err := r.prepareSegment(seg)
	if err != nil {
		return err
	}
	defer r.free(l)
	return r.launch(l, record)
}

// launch launches a prepared segment and synchronizes; with record, it
// checks the params the device decoded and records the launch.
func (r *runner) launch(l *segLaunch, record bool) error {
	var start time.Time
	if record {
		start = r.opts.Now() // not in a timed perf run: a clock read is a tenth of a small launch
	}
	serrs, err := r.launchN(l, 1)
	if err != nil {
		return err
	}
	if record {
		if err := r.checkDecoded(l.seg, l.step()); err != nil {
			return err
		}
	}
	if len(serrs) > 0 {
		return &KernelFaultError{Step: l.step(), Errors: serrs}
	}
	if record {
		r.res.Launches = append(r.res.Launches, LaunchRecord{Kernel: l.kernel, Nodes: l.names, ParamsSize: len(l.args),
			ShireMask: uint32(l.opts.ShireMask), Start: start, End: r.opts.Now()})
	}
	return nil
}

// launchBatch is a perf run's n launches of a prepared segment, back to
// back, and one synchronize after them, as a backend computes the graph
// of n copies of the op that test-backend-ops perf times (ggml-et's
// launches queue on one stream; their errors come out at the
// synchronize): a stream error of any is a fault.
func (r *runner) launchBatch(l *segLaunch, n int) error {
	serrs, err := r.launchN(l, n)
	if err == nil && len(serrs) > 0 {
		err = &KernelFaultError{Step: l.step(), Errors: serrs}
	}
	return err
}

// launchN launches a prepared segment n times, then synchronizes once,
// and returns the stream errors the synchronize reported.
func (r *runner) launchN(l *segLaunch, n int) ([]driver.StreamError, error) {
	if rl, ok := r.dev.(driver.RepeatLauncher); ok && n > 1 {
		if err := rl.LaunchRepeat(r.ctx, l.id, l.args, l.opts, n); err != nil {
			return nil, fmt.Errorf("launch %s (%v): %w", l.kernel, l.names, err)
		}
	} else {
		for range n {
			if err := r.dev.Launch(r.ctx, l.id, l.args, l.opts); err != nil {
				return nil, fmt.Errorf("launch %s (%v): %w", l.kernel, l.names, err)
			}
		}
	}
	serrs, err := r.dev.Sync(r.ctx)
	if err != nil {
		return nil, fmt.Errorf("sync after %s: %w", l.kernel, err)
	}
	return serrs, nil
}

// step names a prepared segment in errors: its kernel and nodes.
func (l *segLaunch) step() string { return fmt.Sprintf("%s (%v)", l.kernel, l.names) }

// DecodingDevice is a device that decodes the params of the kernels it
// runs itself (the reference device): a run checks, after every launch,
// that the decoded params equal the planned ones field by field.
type DecodingDevice interface {
	TakeDecoded() []abi.Decoded
}

// ABIMismatchError is a launch whose params, as the device decoded them,
// differ from the values the plan encoded: the manifest the plan was
// built with and the device's disagree, or the encoding is wrong.
type ABIMismatchError struct {
	Step   string
	Kernel string
	Diffs  []abi.FieldDiff
}

func (e *ABIMismatchError) Error() string {
	msg := fmt.Sprintf("%s: ABI mismatch: the device decoded %d field(s) of %s params differently from the plan", e.Step, len(e.Diffs), e.Kernel)
	if len(e.Diffs) > 0 {
		msg += ": " + e.Diffs[0].String()
	}
	return msg
}

// checkDecoded compares the params the device decoded for segment seg
// with the planned ones (a device that does not decode them is not
// checked).
func (r *runner) checkDecoded(seg []int, step string) error {
	if r.decoder == nil {
		return nil
	}
	got := r.decoder.TakeDecoded()
	for k, si := range seg {
		s := &r.p.Steps[si]
		if k >= len(got) {
			return &ABIMismatchError{Step: step, Kernel: s.Kernel, Diffs: []abi.FieldDiff{{Field: "kernel", Planned: s.Kernel, Decoded: "(not run)"}}}
		}
		if got[k].Kernel != s.Kernel {
			return &ABIMismatchError{Step: step, Kernel: s.Kernel, Diffs: []abi.FieldDiff{{Field: "kernel", Planned: s.Kernel, Decoded: got[k].Kernel}}}
		}
		want, err := r.p.Values(s, r.addrFunc())
		if err != nil {
			return err
		}
		if diffs := abi.Diff(s.Layout, want, got[k].Values); len(diffs) > 0 {
			return &ABIMismatchError{Step: step, Kernel: s.Kernel, Diffs: diffs}
		}
		r.res.ABIChecked++
	}
	return nil
}

func (r *runner) upTemp(b []byte) (driver.DevPtr, error) {
	sz := uint64(len(b)+63) &^ 63
	if sz == 0 {
		sz = 64
	}
	p, err := r.dev.Malloc(r.ctx, sz, 64)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, sz)
	copy(buf, b)
	if err := r.dev.Write(r.ctx, p, buf); err != nil {
		r.dev.Free(r.ctx, p)
		return 0, err
	}
	return p, nil
}

// download reads the device memory of base value b.
func (r *runner) download(b int) ([]byte, error) {
	start := r.opts.Now()
	defer func() { r.res.Phases.DownloadNS += r.opts.Now().Sub(start).Nanoseconds() }()
	buf := make([]byte, r.size[b])
	if err := r.dev.Read(r.ctx, r.addr[b], buf); err != nil {
		return nil, fmt.Errorf("download %s: %w", r.p.Graph.Values[b].Name, err)
	}
	return buf, nil
}

// onDevice returns value v's tensor backed by a copy of its device memory.
func (r *runner) onDevice(v int, cache map[int][]byte) (*ops.Tensor, error) {
	val := &r.p.Graph.Values[v]
	buf, ok := cache[val.Base]
	if !ok {
		var err error
		if buf, err = r.download(val.Base); err != nil {
			return nil, err
		}
		cache[val.Base] = buf
	}
	t := *val.T
	t.Buf = buf
	return &t, nil
}

// fallback computes an unsupported node on the host from device data and
// writes the result back, like ggml's CPU fallback.
func (r *runner) fallback(s *plan.Step) error {
	g := r.p.Graph
	for _, ni := range s.Nodes {
		n := g.Nodes[ni]
		cache := map[int][]byte{}
		srcs := make([]*ops.Tensor, len(n.Src))
		for i, sv := range n.Src {
			t, err := r.onDevice(sv, cache)
			if err != nil {
				return err
			}
			srcs[i] = t
		}
		dst, err := r.onDevice(n.Out, cache)
		if err != nil {
			return err
		}
		if err := runNode(n, dst, srcs); err != nil {
			return fmt.Errorf("fallback %s: %w", n.Name, err)
		}
		b := g.Values[n.Out].Base
		if err := r.dev.Write(r.ctx, r.addr[b], cache[b]); err != nil {
			return fmt.Errorf("write back %s: %w", n.Name, err)
		}
	}
	return nil
}

func (r *runner) compare() error {
	g := r.p.Graph
	final := map[int][]byte{}
	for _, o := range g.Outputs {
		val := &g.Values[o]
		res := OutputResult{Output: val.Name, Node: val.Name}
		if val.Node >= 0 {
			res.Op = g.Nodes[val.Node].Op
		}
		limit := MaxNMSEFor(res.Op)
		si := producerOf(r.p, o)
		var err error
		if si >= 0 {
			s := &r.p.Steps[si]
			last := g.Nodes[s.Nodes[len(s.Nodes)-1]]
			res.Node, res.Op, res.Kernel, res.Fusion = last.Name, last.Op, s.Kernel, s.Fusion
			res.TimeNS = r.stepT[si]
			if s.Kind == plan.StepFallback {
				res.Fallback = true
				res.Reasons = s.Verdict.Reasons
			}
			limit = StepMaxNMSE(g, s)
			if res.Got, err = r.j.gotTensor(r, o); err != nil {
				return err
			}
			res.Want = r.j.want(o)
		} else {
			// A view of a leaf: nothing computed it.
			if res.Got, err = r.onDevice(o, final); err != nil {
				return err
			}
			res.Want = r.chained[o]
		}
		if r.opts.MaxNMSE > 0 {
			limit = r.opts.MaxNMSE
		}
		got := res.Got.ToF32()
		res.Compare = ops.Compare(got, res.Want.ToF32(), limit)
		dlimit := r.opts.GraphNMSE
		res.DriftJudged = dlimit > 0
		if !res.DriftJudged {
			dlimit = math.MaxFloat64
		}
		res.Chained = r.chained[o]
		res.Drift = ops.Compare(got, res.Chained.ToF32(), dlimit)
		if !res.DriftJudged {
			res.Drift.MaxNMSE = 0
		}
		res.Status = verdict.Judge(res.Evidence()).Status
		r.res.Outputs = append(r.res.Outputs, res)
	}
	return nil
}

// perf times each segment: warm-up, then timed runs of launch + sync.
func (r *runner) perf() error {
	g := r.p.Graph
	segs := r.p.Segments()
	for k, seg := range segs {
		r.step(StepProgress{Index: k, Total: len(segs), Kernel: r.p.SegmentKernel(seg), Nodes: r.nodeNames(seg), Timing: true})
		pr := PerfResult{Nodes: r.nodeNames(seg), Kernel: r.p.SegmentKernel(seg), ShireMask: r.p.SegmentMask(seg)}
		for _, si := range seg {
			for _, ni := range r.p.Steps[si].Nodes {
				n := g.Nodes[ni]
				pr.Ops = append(pr.Ops, n.Op)
			}
			last := g.Nodes[r.p.Steps[si].Nodes[len(r.p.Steps[si].Nodes)-1]]
			first := g.Nodes[r.p.Steps[si].Nodes[0]]
			c := first.Info.Cost(g.Values[last.Out].T, srcTensors(g, first), first.Params)
			pr.Flops += c.Flops
			pr.Bytes += c.Bytes
		}
		if err := r.timeSegment(seg, &pr); err != nil {
			return err
		}
		r.res.Perf = append(r.res.Perf, pr)
	}
	return nil
}

// timeSegment encodes a segment once, launches it Warmup times untimed,
// then Runs times timed (launch + sync; a short launch in batches of
// launches and one sync, see perfBatchBelow and launchBatch), more while
// the timed runs add up to less than MinTime, and fills pr's run
// figures. The
// params are encoded outside the timed runs, as a backend encodes them
// once per graph.
func (r *runner) timeSegment(seg []int, pr *PerfResult) error {
	l, err := r.prepareSegment(seg)
	if err != nil {
		return err
	}
	defer r.free(l)
	p := r.opts.Perf
	batch := 1
	pr.Untimed = p.Warmup
	for i := 0; i < p.Warmup; i++ {
		start := r.opts.Now()
		if err := r.launchBatch(l, 1); err != nil {
			return err
		}
		if d := r.opts.Now().Sub(start); i == p.Warmup-1 && d > 0 && d < perfBatchBelow {
			batch = int(min(perfBatchMax, max(1, perfBatchSpan/d)))
		}
	}
	// One launch, clock reads included, is a poor measure of a launch
	// among many (a 0.1 µs one timed alone at 1.6 µs made batches of 6):
	// a batch of the size found is timed and the size found again from
	// it, a few times (untimed, as the warm-up). A slow batch (a
	// collection, a preemption) can only make the size smaller than it
	// should be, so the largest size found is kept.
	for range perfBatchRounds {
		if batch == 1 || batch == perfBatchMax {
			break
		}
		start := r.opts.Now()
		if err := r.launchBatch(l, batch); err != nil {
			return err
		}
		pr.Untimed += batch
		d := r.opts.Now().Sub(start)
		batch = max(batch, int(min(perfBatchMax, perfBatchSpan*time.Duration(batch)/max(d, 1))))
	}
	times := make([]int64, 0, p.Runs)
	var total time.Duration
	for i := 0; i < p.Runs || (total < p.MinTime && i < MaxPerfRuns); i++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		start := r.opts.Now()
		if err := r.launchBatch(l, batch); err != nil {
			return err
		}
		d := r.opts.Now().Sub(start)
		total += d
		times = append(times, d.Nanoseconds()/int64(batch))
	}
	slices.Sort(times)
	pr.Runs, pr.Batch = len(times), batch
	pr.MinNS, pr.MaxNS, pr.MedNS = times[0], times[len(times)-1], times[len(times)/2]
	return nil
}

// IsKernelFault reports whether err is a device stream error.
func IsKernelFault(err error) bool {
	var kf *KernelFaultError
	return errors.As(err, &kf)
}

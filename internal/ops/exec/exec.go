package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
)

// Status of one compared output.
const (
	StatusPass     = "PASS"
	StatusFail     = "FAIL"
	StatusFallback = "FALLBACK"
)

// Options control a run.
type Options struct {
	// MaxNMSE overrides the per-op NMSE limit for every output when > 0.
	MaxNMSE float64
	// KernelELF returns the ELF bytes of a kernel for devices that need
	// them; nil means no ELF (the reference device knows kernels by name).
	KernelELF func(name string) ([]byte, error)
	// Perf, when Runs > 0, times every launch segment: Warmup untimed runs,
	// then Runs timed runs of launch + sync.
	Perf PerfOptions
	// Now is the clock for timings (time.Now when nil).
	Now func() time.Time
	// Trace, when set, records the run in the runtime's trace format
	// (see TraceRecorder).
	Trace *TraceRecorder
}

// PerfOptions configure perf mode.
type PerfOptions struct {
	Warmup int
	Runs   int
}

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
	Status string
	// Compare is the test-backend-ops style comparison.
	Compare ops.Comparison
	// TimeNS is the time of the step that produced the output (launch to
	// sync), in nanoseconds.
	TimeNS int64
	// Reasons are the unsupported conditions of a fallback.
	Reasons []string
	// Got is the output as the device produced it (the graph's own
	// tensor holds the reference math after the run).
	Got *ops.Tensor
}

// PerfResult is the timing of one launch segment.
type PerfResult struct {
	// Kernel is the kernel launched (uberkernel for a batched segment).
	Kernel string
	// Nodes are the graph nodes the segment computes.
	Nodes []string
	Ops   []ops.Op
	Runs  int
	MinNS int64
	MaxNS int64
	MedNS int64
	Flops int64
	Bytes int64
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
}

// LaunchRecord is one kernel launch as the host saw it.
type LaunchRecord struct {
	Kernel     string
	Nodes      []string
	ParamsSize int
	Start, End time.Time
}

// Passed reports whether every output passed (fallbacks count as passed).
func (r *Result) Passed() bool {
	for _, o := range r.Outputs {
		if o.Status == StatusFail {
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
func MaxNMSEFor(op ops.Op) float64 {
	switch op {
	case ops.OpMulMat, ops.OpFlashAttnExt, "mul_mat_id", "conv_2d", "im2col":
		return ops.MatMulMaxNMSE
	case ops.OpSoftMax:
		return ops.SoftMaxMaxNMSE
	}
	return ops.DefaultMaxNMSE
}

type runner struct {
	ctx   context.Context
	dev   driver.Device
	p     *plan.Plan
	opts  Options
	addr  map[int]driver.DevPtr // base value -> device buffer
	size  map[int]uint64
	kern  map[string]driver.KernelID
	res   *Result
	stepT map[int]int64 // step -> ns
}

// Run executes p on dev and compares the outputs with the reference math.
// Device buffers are freed before it returns. A device that reports
// stream errors yields a *KernelFaultError.
func Run(ctx context.Context, dev driver.Device, p *plan.Plan, opts Options) (*Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Trace != nil {
		dev = opts.Trace.attach(dev, opts.Now)
	}
	r := &runner{ctx: ctx, dev: dev, p: p, opts: opts, addr: map[int]driver.DevPtr{}, size: map[int]uint64{},
		kern: map[string]driver.KernelID{}, res: &Result{}, stepT: map[int]int64{}}
	defer r.freeAll()
	if err := r.alloc(); err != nil {
		return nil, err
	}
	if err := r.upload(); err != nil {
		return nil, err
	}
	if err := r.loadKernels(); err != nil {
		return nil, err
	}
	if err := r.execute(); err != nil {
		return nil, err
	}
	if err := Reference(ctx, p.Graph); err != nil {
		return nil, fmt.Errorf("reference math: %w", err)
	}
	if err := r.compare(); err != nil {
		return nil, err
	}
	if opts.Perf.Runs > 0 {
		if err := r.perf(); err != nil {
			return nil, err
		}
	}
	return r.res, nil
}

// Reference evaluates every node of g on the host, into the graph's own
// tensors (the expected values).
func Reference(ctx context.Context, g *plan.Graph) error {
	for _, n := range g.Nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n.Info.View {
			continue
		}
		if err := n.Info.Run(g.Values[n.Out].T, srcTensors(g, n), n.Params); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
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
	n := uint64(len(t.Buf))
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
		ptr, err := r.dev.Malloc(sz, align)
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
		r.dev.Free(r.addr[k])
	}
}

// upload writes every leaf to the device and zeroes every other buffer
// (ggml-et clears buffers with memops; here a plain write).
func (r *runner) upload() error {
	g := r.p.Graph
	for _, b := range bases(g) {
		v := &g.Values[b]
		data := make([]byte, r.size[b])
		if v.Node < 0 {
			copy(data, v.T.Buf)
		}
		if err := r.dev.Write(r.ctx, r.addr[b], data); err != nil {
			return fmt.Errorf("upload %s: %w", v.Name, err)
		}
	}
	return nil
}

func (r *runner) loadKernels() error {
	var names []string
	for _, seg := range r.p.Segments() {
		if len(seg) > 1 || (r.p.Uberkernel && r.p.Steps[seg[0]].Batchable) {
			names = append(names, "uberkernel")
		}
		for _, si := range seg {
			names = append(names, r.p.Steps[si].Kernel)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, name := range names {
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
// the host.
func (r *runner) execute() error {
	segOf := map[int][]int{}
	for _, seg := range r.segments() {
		segOf[seg[0]] = seg
	}
	for i := 0; i < len(r.p.Steps); i++ {
		s := &r.p.Steps[i]
		switch s.Kind {
		case plan.StepFallback:
			start := r.opts.Now()
			if err := r.fallback(s); err != nil {
				return err
			}
			r.stepT[i] = r.opts.Now().Sub(start).Nanoseconds()
		case plan.StepLaunch:
			seg, ok := segOf[i]
			if !ok {
				continue // inside a segment already run
			}
			for _, si := range seg {
				if err := r.initDst(&r.p.Steps[si]); err != nil {
					return err
				}
			}
			start := r.opts.Now()
			if err := r.launchSegment(seg, true); err != nil {
				return err
			}
			ns := r.opts.Now().Sub(start).Nanoseconds()
			for _, si := range seg {
				r.stepT[si] = ns
			}
			i = seg[len(seg)-1]
		}
	}
	return nil
}

// segments are the plan's launch segments, split before an in-place step
// (InitDst) whose source is written earlier in the same uberkernel
// segment: et gives an in-place result its own buffer and copies the
// source into it before the launch, which needs that source to be final.
// (On ggml-et the result aliases the source: no copy and no split.)
func (r *runner) segments() [][]int {
	g := r.p.Graph
	var out [][]int
	for _, seg := range r.p.Segments() {
		start := 0
		written := map[int]bool{}
		for i, si := range seg {
			s := &r.p.Steps[si]
			if s.InitDst && i > start {
				src := g.Values[g.Nodes[s.Nodes[0]].Src[0]].Base
				if written[src] {
					out = append(out, seg[start:i])
					start = i
					clear(written)
				}
			}
			if o := s.Out(g); o >= 0 {
				written[g.Values[o].Base] = true
			}
		}
		out = append(out, seg[start:])
	}
	return out
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

// launchSegment launches one segment (a direct launch or an uberkernel
// batch) and synchronizes.
func (r *runner) launchSegment(seg []int, record bool) error {
	opts := driver.LaunchOptions{ShireMask: uint64(r.p.SegmentMask(seg)), Barrier: true}
	names := r.nodeNames(seg)
	var kernel string
	var args []byte
	var temps []driver.DevPtr
	defer func() {
		for _, t := range temps {
			r.dev.Free(t)
		}
	}()
	first := &r.p.Steps[seg[0]]
	if r.p.Uberkernel && first.Batchable {
		batch := abi.NewBatch(r.p.Manifest)
		for _, si := range seg {
			s := &r.p.Steps[si]
			b, err := r.p.Encode(s, r.addrFunc())
			if err != nil {
				return err
			}
			if _, err := batch.Add(s.Kernel, b); err != nil {
				return err
			}
		}
		insts, blob := batch.InstBytes(), batch.Blob()
		ip, err := r.upTemp(insts)
		if err != nil {
			return err
		}
		temps = append(temps, ip)
		bp, err := r.upTemp(blob)
		if err != nil {
			return err
		}
		temps = append(temps, bp)
		kernel = "uberkernel"
		args = abi.EncodeLaunch(batch.Launch(uint64(ip), uint64(bp)))
	} else {
		var err error
		kernel = first.Kernel
		if args, err = r.p.Encode(first, r.addrFunc()); err != nil {
			return err
		}
	}
	start := r.opts.Now()
	if err := r.dev.Launch(r.ctx, r.kern[kernel], args, opts); err != nil {
		return fmt.Errorf("launch %s (%v): %w", kernel, names, err)
	}
	serrs, err := r.dev.Sync(r.ctx)
	if err != nil {
		return fmt.Errorf("sync after %s: %w", kernel, err)
	}
	if len(serrs) > 0 {
		return &KernelFaultError{Step: fmt.Sprintf("%s (%v)", kernel, names), Errors: serrs}
	}
	if record {
		r.res.Launches = append(r.res.Launches, LaunchRecord{Kernel: kernel, Nodes: names, ParamsSize: len(args), Start: start, End: r.opts.Now()})
	}
	return nil
}

func (r *runner) upTemp(b []byte) (driver.DevPtr, error) {
	sz := uint64(len(b)+63) &^ 63
	if sz == 0 {
		sz = 64
	}
	p, err := r.dev.Malloc(sz, 64)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, sz)
	copy(buf, b)
	if err := r.dev.Write(r.ctx, p, buf); err != nil {
		r.dev.Free(p)
		return 0, err
	}
	return p, nil
}

// download reads the device memory of base value b.
func (r *runner) download(b int) ([]byte, error) {
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

// initDst copies the first source of an in-place step (set_rows) into its
// result's memory before the launch: the kernel writes only the indexed
// rows, and ggml's result is that source itself.
func (r *runner) initDst(s *plan.Step) error {
	if !s.InitDst {
		return nil
	}
	g := r.p.Graph
	n := g.Nodes[s.Nodes[0]]
	cache := map[int][]byte{}
	src, err := r.onDevice(n.Src[0], cache)
	if err != nil {
		return err
	}
	dst, err := r.onDevice(n.Out, cache)
	if err != nil {
		return err
	}
	if src.Type != dst.Type || src.Ne != dst.Ne {
		return fmt.Errorf("%s: in-place result %s %s differs from its source %s %s", n.Name, dst.Type, dst.ShapeString(), src.Type, src.ShapeString())
	}
	for i3 := int64(0); i3 < src.Ne[3]; i3++ {
		for i2 := int64(0); i2 < src.Ne[2]; i2++ {
			for i1 := int64(0); i1 < src.Ne[1]; i1++ {
				copy(dst.RowBytes(i1, i2, i3), src.RowBytes(i1, i2, i3))
			}
		}
	}
	b := g.Values[n.Out].Base
	if err := r.dev.Write(r.ctx, r.addr[b], cache[b]); err != nil {
		return fmt.Errorf("initialize %s: %w", n.Name, err)
	}
	return nil
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
		if err := n.Info.Run(dst, srcs, n.Params); err != nil {
			return fmt.Errorf("fallback %s: %w", n.Name, err)
		}
		b := g.Values[n.Out].Base
		if err := r.dev.Write(r.ctx, r.addr[b], cache[b]); err != nil {
			return fmt.Errorf("write back %s: %w", n.Name, err)
		}
	}
	return nil
}

// producer finds the step that computed value v (-1 for a leaf or a view
// of a leaf).
func (r *runner) producer(v int) int {
	g := r.p.Graph
	for {
		val := &g.Values[v]
		if val.Node < 0 {
			return -1
		}
		n := g.Nodes[val.Node]
		if !n.Info.View {
			break
		}
		v = n.Src[0]
	}
	for i := range r.p.Steps {
		if r.p.Steps[i].Out(g) == v {
			return i
		}
	}
	return -1
}

func (r *runner) compare() error {
	g := r.p.Graph
	for _, o := range g.Outputs {
		val := &g.Values[o]
		got, err := r.onDevice(o, map[int][]byte{})
		if err != nil {
			return err
		}
		res := OutputResult{Output: val.Name, Node: val.Name, Status: StatusPass, Got: got}
		op := ops.Op("")
		if val.Node >= 0 {
			op = g.Nodes[val.Node].Op
		}
		res.Op = op
		if si := r.producer(o); si >= 0 {
			s := &r.p.Steps[si]
			last := g.Nodes[s.Nodes[len(s.Nodes)-1]]
			res.Node, res.Op, res.Kernel, res.Fusion = last.Name, last.Op, s.Kernel, s.Fusion
			res.TimeNS = r.stepT[si]
			if s.Kind == plan.StepFallback {
				res.Status = StatusFallback
				res.Reasons = s.Verdict.Reasons
			}
			op = last.Op
		}
		limit := MaxNMSEFor(op)
		if r.opts.MaxNMSE > 0 {
			limit = r.opts.MaxNMSE
		}
		res.Compare = ops.Compare(got.ToF32(), val.T.ToF32(), limit)
		if !res.Compare.OK() {
			res.Status = StatusFail
		}
		r.res.Outputs = append(r.res.Outputs, res)
	}
	return nil
}

// perf times each segment: warm-up, then timed runs of launch + sync.
func (r *runner) perf() error {
	g := r.p.Graph
	for _, seg := range r.segments() {
		pr := PerfResult{Nodes: r.nodeNames(seg)}
		pr.Kernel = r.p.Steps[seg[0]].Kernel
		if r.p.Uberkernel && r.p.Steps[seg[0]].Batchable {
			pr.Kernel = "uberkernel"
		}
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
		for i := 0; i < r.opts.Perf.Warmup; i++ {
			if err := r.launchSegment(seg, false); err != nil {
				return err
			}
		}
		times := make([]int64, 0, r.opts.Perf.Runs)
		for i := 0; i < r.opts.Perf.Runs; i++ {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			start := r.opts.Now()
			if err := r.launchSegment(seg, false); err != nil {
				return err
			}
			times = append(times, r.opts.Now().Sub(start).Nanoseconds())
		}
		slices.Sort(times)
		pr.Runs = len(times)
		pr.MinNS, pr.MaxNS, pr.MedNS = times[0], times[len(times)-1], times[len(times)/2]
		r.res.Perf = append(r.res.Perf, pr)
	}
	return nil
}

// IsKernelFault reports whether err is a device stream error.
func IsKernelFault(err error) bool {
	var kf *KernelFaultError
	return errors.As(err, &kf)
}

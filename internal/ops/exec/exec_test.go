package exec

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/verdict"
)

// buildGraph: x -> rms_norm -> mul(w) (fused), q4_K mul_mat (fallback),
// set_rows (in place), outputs all three.
func buildGraph(t *testing.T) *plan.Graph {
	t.Helper()
	g := plan.NewGraph()
	data := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((i*37)%17)/8 - 1
		}
		return out
	}
	leaf := func(name string, typ ops.Type, ne ...int64) {
		n := int64(1)
		for _, v := range ne {
			n *= v
		}
		if _, err := g.AddLeaf(name, ops.FromF32(typ, ne, data(int(n)))); err != nil {
			t.Fatal(err)
		}
	}
	leaf("x", ops.F32, 256, 3)
	leaf("w", ops.F32, 256)
	leaf("wk", ops.Q4_K, 256, 16)
	leaf("dst", ops.F32, 256, 6)
	if _, err := g.AddLeaf("idx", ops.FromInts(ops.I64, []int64{3}, []int64{5, 0, 2})); err != nil {
		t.Fatal(err)
	}
	node := func(name string, op ops.Op, src []string, p map[string]any) {
		if _, err := g.AddNode(name, op, src, p, 0); err != nil {
			t.Fatal(err)
		}
	}
	node("xn", ops.OpRMSNorm, []string{"x"}, map[string]any{"eps": 1e-5})
	node("xw", ops.OpMul, []string{"xn", "w"}, nil)
	node("mk", ops.OpMulMat, []string{"wk", "xw"}, nil)
	node("rows", ops.OpSetRows, []string{"dst", "xw", "idx"}, nil)
	if err := g.SetOutputs([]string{"xw", "mk", "rows"}); err != nil {
		t.Fatal(err)
	}
	return g
}

func run(t *testing.T, dev driver.Device, uber bool, opts Options) (*Result, *plan.Plan, error) {
	t.Helper()
	g := buildGraph(t)
	p, err := plan.Build(g, abi.Default(), plan.Options{Uberkernel: uber})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), dev, p, opts)
	return res, p, err
}

func TestRunOnReferenceDevice(t *testing.T) {
	for _, uber := range []bool{false, true} {
		res, _, err := run(t, ref.New(ref.Options{}), uber, Options{})
		if err != nil {
			t.Fatalf("uberkernel=%v: %v", uber, err)
		}
		want := map[string]verdict.Status{"xw": verdict.Pass, "mk": verdict.Fallback, "rows": verdict.Pass}
		if len(res.Outputs) != 3 {
			t.Fatalf("%d outputs", len(res.Outputs))
		}
		for _, o := range res.Outputs {
			if o.Status != want[o.Output] {
				t.Errorf("uberkernel=%v: %s status %s, want %s (%s)", uber, o.Output, o.Status, want[o.Output], o.Compare)
			}
		}
		if res.Outputs[0].Kernel != "rms_norm_mul_f32" || res.Outputs[0].Fusion != "rms_norm+mul" {
			t.Errorf("xw kernel %q fusion %q", res.Outputs[0].Kernel, res.Outputs[0].Fusion)
		}
		if len(res.Outputs[1].Reasons) == 0 {
			t.Error("fallback without reasons")
		}
		kernels := map[string]bool{}
		for _, l := range res.Launches {
			kernels[l.Kernel] = true
		}
		if uber && !kernels["uberkernel"] {
			t.Errorf("no uberkernel launch: %v", kernels)
		}
		if !uber && (kernels["uberkernel"] || !kernels["set_rows_f32"]) {
			t.Errorf("launches %v", kernels)
		}
	}
}

// faultyDevice reports a stream error at every Sync.
type faultyDevice struct{ driver.Device }

func (d faultyDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	return []driver.StreamError{{Code: "KERNEL_ERROR", Message: "hart 3 faulted", Contexts: []driver.ErrorContext{{Hart: 3, Cause: 5}}}}, nil
}

func TestKernelFault(t *testing.T) {
	_, _, err := run(t, faultyDevice{ref.New(ref.Options{})}, false, Options{})
	var kf *KernelFaultError
	if !errors.As(err, &kf) || !IsKernelFault(err) {
		t.Fatalf("err = %v, want a KernelFaultError", err)
	}
	if kf.Errors[0].Contexts[0].Hart != 3 {
		t.Errorf("contexts lost: %+v", kf.Errors)
	}
}

// flipDevice corrupts the first float read back from a given buffer.
type flipDevice struct {
	driver.Device
}

func (d flipDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	if err := d.Device.Read(ctx, src, dst); err != nil {
		return err
	}
	if len(dst) >= 4 {
		dst[3] ^= 0x40
	}
	return nil
}

func TestMismatchIsFail(t *testing.T) {
	res, _, err := run(t, flipDevice{ref.New(ref.Options{})}, false, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed() {
		t.Fatal("corrupted outputs passed")
	}
	if res.Outputs[0].Status != verdict.Fail || res.Outputs[0].Compare.OK() {
		t.Errorf("xw: %+v", res.Outputs[0])
	}
}

func TestPerf(t *testing.T) {
	res, p, err := run(t, ref.New(ref.Options{}), false, Options{Perf: PerfOptions{Warmup: 1, Runs: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Perf) != len(p.Segments()) {
		t.Fatalf("%d perf rows for %d segments", len(res.Perf), len(p.Segments()))
	}
	for _, pr := range res.Perf {
		if pr.Runs != 3 || pr.MinNS > pr.MedNS || pr.MedNS > pr.MaxNS || pr.Bytes == 0 {
			t.Errorf("perf row %+v", pr)
		}
	}
}

// With MinTime, timing goes on after Runs runs until the timed runs add
// up to it: on a clock that advances 1 ms at each reading, a timed run
// takes at least 1 ms, so 20 ms are reached within 20 runs, and after more
// than the 3 asked for.
func TestPerfMinTime(t *testing.T) {
	var now time.Time
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	res, _, err := run(t, ref.New(ref.Options{}), false, Options{Now: clock, Perf: PerfOptions{Runs: 3, MinTime: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range res.Perf {
		if pr.Runs <= 3 || pr.Runs > 20 || pr.MinNS < int64(time.Millisecond) {
			t.Errorf("perf row %+v: want 4..20 runs of >= 1 ms", pr)
		}
	}
	// Without MinTime, exactly Runs.
	res, _, err = run(t, ref.New(ref.Options{}), false, Options{Now: clock, Perf: PerfOptions{Runs: 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range res.Perf {
		if pr.Runs != 3 {
			t.Errorf("perf row %+v: want 3 runs", pr)
		}
	}
}

func TestCancelled(t *testing.T) {
	g := buildGraph(t)
	p, err := plan.Build(g, abi.Default(), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, ref.New(ref.Options{}), p, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestMaxNMSEFor(t *testing.T) {
	if MaxNMSEFor(ops.OpMulMat) != 5e-4 || MaxNMSEFor(ops.OpAdd) != 1e-7 || MaxNMSEFor(ops.OpSoftMax) != 1e-6 {
		t.Error("per-op limits differ from test-backend-ops")
	}
}

// Regression: an in-place step (set_rows) whose destination source is
// produced earlier in the same uberkernel segment must see the final
// values of that source.
func TestInPlaceAfterProducerInUberkernel(t *testing.T) {
	g := plan.NewGraph()
	x := make([]float32, 64*4)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	add := func(name string, tt *ops.Tensor) {
		if _, err := g.AddLeaf(name, tt); err != nil {
			t.Fatal(err)
		}
	}
	add("x", ops.FromF32(ops.F32, []int64{64, 4}, x))
	add("src", ops.FromF32(ops.F32, []int64{64, 1}, x[:64]))
	add("idx", ops.FromInts(ops.I64, []int64{1}, []int64{2}))
	if _, err := g.AddNode("d", ops.OpScale, []string{"x"}, map[string]any{"scale": 3.0}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddNode("rows", ops.OpSetRows, []string{"d", "src", "idx"}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.SetOutputs([]string{"rows"}); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(g, abi.Default(), plan.Options{Uberkernel: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments()) != 1 {
		t.Fatalf("want both launches in one uberkernel segment, got %v", p.Segments())
	}
	res, err := Run(context.Background(), ref.New(ref.Options{}), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Errorf("set_rows after its producer in one segment: %+v", res.Outputs[0])
	}
}

// A plan is immutable: running it leaves every tensor of its graph as it
// was (the in-place set_rows into a leaf included), and a second run
// gives the same results.
func TestPlanRunsTwice(t *testing.T) {
	g := buildGraph(t)
	p, err := plan.Build(g, abi.Default(), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := make([][]byte, len(g.Values))
	for i, v := range g.Values {
		before[i] = slices.Clone(v.T.Buf)
	}
	var runs [2]*Result
	for k := range runs {
		if runs[k], err = Run(context.Background(), ref.New(ref.Options{}), p, Options{}); err != nil {
			t.Fatalf("run %d: %v", k+1, err)
		}
		for i, v := range g.Values {
			if !bytes.Equal(v.T.Buf, before[i]) {
				t.Fatalf("run %d changed the graph's tensor %s", k+1, v.Name)
			}
		}
	}
	if len(runs[0].Outputs) != len(runs[1].Outputs) {
		t.Fatalf("%d outputs, then %d", len(runs[0].Outputs), len(runs[1].Outputs))
	}
	for i, a := range runs[0].Outputs {
		b := runs[1].Outputs[i]
		if a.Status != b.Status || !bytes.Equal(a.Got.Buf, b.Got.Buf) || !bytes.Equal(a.Want.Buf, b.Want.Buf) || !bytes.Equal(a.Chained.Buf, b.Chained.Buf) {
			t.Errorf("%s: the second run differs (status %s then %s)", a.Output, a.Status, b.Status)
		}
		if allZero(a.Chained.Buf) {
			t.Errorf("%s: chained reference is all zeros", a.Output)
		}
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// corruptingDevice flips a bit of every launch's params bytes: the
// reference device then decodes params that differ from the plan's.
type corruptingDevice struct{ *ref.Device }

func (d corruptingDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	b := slices.Clone(args)
	b[24] ^= 1 // inside the first tensor field's ne
	return d.Device.Launch(ctx, k, b, opts)
}

// On the reference device every launch's decoded params are checked
// against the plan, field by field: bytes that decode differently are an
// ABI mismatch naming the field, not a numeric failure.
func TestABIMismatch(t *testing.T) {
	_, _, err := run(t, corruptingDevice{ref.New(ref.Options{})}, false, Options{})
	var am *ABIMismatchError
	if !errors.As(err, &am) {
		t.Fatalf("err %v, want an *ABIMismatchError", err)
	}
	if len(am.Diffs) == 0 || !strings.Contains(am.Diffs[0].Field, ".ne[") {
		t.Errorf("diffs %v, want a tensor's ne", am.Diffs)
	}
	// The same plan on an honest reference device passes the check.
	if _, _, err := run(t, ref.New(ref.Options{}), true, Options{}); err != nil {
		t.Fatal(err)
	}
}

// A launch shorter than perfBatchBelow in its last warm-up run is timed
// in batches, their size found again from timed batches of it. On a
// clock whose every reading costs 1 µs and whose launches cost 100 ns
// each, the warm-up run takes 1.1 µs: batches of 10 µs / 1.1 µs = 9
// launches, which would time them at (1 µs + 9·100 ns) / 9 = 211 ns; a
// batch of 9 takes 1.9 µs, so 10 µs·9 / 1.9 µs = 47, then 82, then 89,
// where it stays (perfBatchRounds), and a timed run of 89 launches (1 µs + 8.9 µs) is 111
// ns a launch. On a clock of 1 ms readings, or without a warm-up run,
// launches are timed one by one. A batch is one LaunchRepeat of the
// reference device, and synchronizes once, after its last launch.
func TestPerfBatch(t *testing.T) {
	for _, c := range []struct {
		step      time.Duration
		warmup    int
		batch     int
		perLaunch int64
	}{
		{time.Microsecond, 1, 89, 111},
		{time.Millisecond, 1, 1, int64(time.Millisecond + 100)},
		{time.Microsecond, 0, 1, int64(time.Microsecond + 100)},
	} {
		clk := &stepClock{step: c.step}
		dev := &clockedDevice{Device: ref.New(ref.Options{}), clk: clk, cost: 100 * time.Nanosecond}
		res, _, err := run(t, dev, false, Options{Now: clk.read, Perf: PerfOptions{Warmup: c.warmup, Runs: 3}})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range res.Perf {
			if pr.Runs != 3 || pr.Batch != c.batch || pr.MedNS != c.perLaunch || pr.MinNS != c.perLaunch {
				t.Errorf("step %v, warm-up %d: perf row %+v: want 3 runs of %d launches, %d ns each", c.step, c.warmup, pr, c.batch, c.perLaunch)
			}
		}
		if c.batch > 1 && (dev.syncs*10 > dev.launches || dev.repeats == 0) {
			t.Errorf("step %v: %d syncs and %d LaunchRepeat calls for %d launches: want one of each a batch", c.step, dev.syncs, dev.repeats, dev.launches)
		}
	}
}

// stepClock advances by step at every reading.
type stepClock struct {
	now  time.Time
	step time.Duration
}

func (c *stepClock) read() time.Time { c.now = c.now.Add(c.step); return c.now }

// clockedDevice is a reference device whose launches take cost on clk,
// counting its launches, syncs and LaunchRepeat calls.
type clockedDevice struct {
	*ref.Device
	clk             *stepClock
	cost            time.Duration
	launches, syncs int
	repeats         int // LaunchRepeat calls
}

func (d *clockedDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	d.clk.now = d.clk.now.Add(d.cost)
	d.launches++
	return d.Device.Launch(ctx, k, args, opts)
}

func (d *clockedDevice) LaunchRepeat(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions, n int) error {
	d.clk.now = d.clk.now.Add(time.Duration(n) * d.cost)
	d.launches += n
	d.repeats++
	return d.Device.LaunchRepeat(ctx, k, args, opts, n)
}

func (d *clockedDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	d.syncs++
	return d.Device.Sync(ctx)
}

// logDevice notes every launch in a log the Step events also go to.
type logDevice struct {
	driver.Device
	log *[]string
}

func (d logDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, o driver.LaunchOptions) error {
	*d.log = append(*d.log, "device launch")
	return d.Device.Launch(ctx, k, args, o)
}

// TestStepProgress: Step names the setup (uploads, kernel loads), then
// each launch (its kernel and nodes, as the launch records) before the
// device sees it, and each fallback, numbered of the run's total; with
// perf, each segment's timing.
func TestStepProgress(t *testing.T) {
	for _, uber := range []bool{false, true} {
		var log []string
		var steps []StepProgress
		opts := Options{Perf: PerfOptions{Runs: 1}, Step: func(s StepProgress) {
			steps = append(steps, s)
			log = append(log, s.String())
		}}
		res, p, err := run(t, logDevice{ref.New(ref.Options{}), &log}, uber, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) == 0 || !steps[0].Setup || steps[0].String() != "uploading the inputs, loading the kernels" {
			t.Fatalf("uberkernel=%v: the first step is not the setup: %v", uber, log)
		}
		steps = steps[1:]
		fallbacks := 0
		for _, s := range p.Steps {
			if s.Kind == plan.StepFallback {
				fallbacks++
			}
		}
		total := len(res.Launches) + fallbacks
		k := 0
		for _, s := range steps {
			if s.Fallback || s.Timing {
				continue
			}
			if k >= len(res.Launches) {
				t.Fatalf("uberkernel=%v: more launch steps than launches: %v", uber, log)
			}
			l := res.Launches[k]
			if s.Kernel != l.Kernel || !slices.Equal(s.Nodes, l.Nodes) || s.Total != total {
				t.Errorf("uberkernel=%v: step %+v, launch %s %v of %d", uber, s, l.Kernel, l.Nodes, total)
			}
			k++
		}
		run := 0
		for _, s := range steps {
			if !s.Timing {
				if s.Index != run {
					t.Errorf("uberkernel=%v: step %d has index %d", uber, run, s.Index)
				}
				run++
			}
		}
		if run != total || k != len(res.Launches) {
			t.Errorf("uberkernel=%v: %d steps for %d launches and %d fallbacks: %v", uber, run, len(res.Launches), fallbacks, log)
		}
		// Each launch step comes before its device launch.
		for i, line := range log {
			if strings.HasPrefix(line, "launch ") && (i+1 >= len(log) || log[i+1] != "device launch") {
				t.Errorf("uberkernel=%v: %q not followed by its launch: %v", uber, line, log)
			}
		}
		timing := 0
		for _, s := range steps {
			if s.Timing {
				timing++
			}
		}
		if timing != len(p.Segments()) {
			t.Errorf("uberkernel=%v: %d timing steps for %d segments", uber, timing, len(p.Segments()))
		}
	}
	if s := (StepProgress{Index: 1, Total: 4, Kernel: "mul_mat_f32", Nodes: []string{"ffn_up"}}).String(); s != "launch 2/4 mul_mat_f32 (ffn_up)" {
		t.Errorf("String() = %q", s)
	}
}

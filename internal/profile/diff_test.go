package profile

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/kernelmap"
)

// diffKernel is one kernel of a hand-built trace: its id and the device
// exec cycles of each launch.
type diffKernel struct {
	name  string
	id    int
	execs []uint64
}

// buildDiffTrace writes a minimal trace with the given launches (the four
// events of reference §2.2 per launch, launches interleaved round-robin)
// and h2d copies, at freqMHz (0: no GetDeviceProperties).
func buildDiffTrace(t *testing.T, freqMHz uint32, kernels []diffKernel, h2d []uint64) ([]byte, *kernelmap.Map) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	const mainT, sender, rcv, cb = 1, 2, 3, 4
	ts := int64(1_000_000_000)
	cyc := uint64(5_000_000)
	id := uint16(1)
	must := func(e *Event) {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	must(&Event{Type: TypeInstant, Class: ClassStartProfiling, TimeNS: ts, Thread: mainT, Has: HasVersion, Version: 3})
	if freqMHz != 0 {
		must(&Event{Type: TypeComplete, Class: ClassGetDeviceProperties, TimeNS: ts + 10, Thread: mainT, Has: HasDuration | HasDevice | HasProps, DurationNS: 5, Device: 0, Props: &DeviceProps{FrequencyMHz: freqMHz}})
	}
	must(&Event{Type: TypeComplete, Class: ClassCreateStream, TimeNS: ts + 20, Thread: mainT, Has: HasDuration | HasDevice | HasStream, DurationNS: 5, Device: 0, Stream: 1})
	var entries []kernelmap.Entry
	for _, k := range kernels {
		entries = append(entries, kernelmap.Entry{Name: k.name, ID: k.id})
	}
	launch := func(kid int, exec uint64) {
		K := id
		id++
		ts += 10_000
		start := cyc
		cyc += 100 + exec
		must(&Event{Type: TypeInstant, Class: ClassCommandSent, TimeNS: ts + 500, Thread: sender, Has: HasID | HasParentID | HasStream | HasDevice, ID: K, ParentID: K, Stream: 1, Device: 0})
		must(&Event{Type: TypeComplete, Class: ClassKernelLaunch, TimeNS: ts, Thread: mainT, Has: HasDuration | HasID | HasKernelID | HasStream, DurationNS: 800, ID: K, KernelID: kid, Stream: 1})
		rsp := ts + 1000 + int64(exec)
		must(&Event{Type: TypeInstant, Class: ClassResponseReceived, TimeNS: rsp, Thread: rcv, Has: HasID | HasRspType | HasDevStart | HasDevWait | HasDevExec, ID: K, RspType: RspKernel, DevStartCycles: start, DevWaitCycles: 100, DevExecCycles: exec})
		must(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: rsp + 100, Thread: rcv, Has: HasID, ID: K})
		ts = rsp + 200
	}
	copyH2D := func(exec uint64) {
		E, C := id, id+1
		id += 2
		ts += 10_000
		start := cyc
		cyc += 100 + exec
		must(&Event{Type: TypeComplete, Class: ClassMemcpyHostToDevice, TimeNS: ts, Thread: mainT, Has: HasDuration | HasID | HasStream | HasSize, DurationNS: 900, ID: E, Stream: 1, SizeBytes: 4096})
		must(&Event{Type: TypeInstant, Class: ClassCommandSent, TimeNS: ts + 1000, Thread: sender, Has: HasID | HasParentID | HasStream | HasDevice, ID: C, ParentID: E, Stream: 1, Device: 0})
		rsp := ts + 2000 + int64(exec)
		must(&Event{Type: TypeInstant, Class: ClassResponseReceived, TimeNS: rsp, Thread: rcv, Has: HasID | HasRspType | HasDevStart | HasDevWait | HasDevExec, ID: C, RspType: RspDMAWrite, DevStartCycles: start, DevWaitCycles: 100, DevExecCycles: exec})
		must(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: rsp + 100, Thread: rcv, Has: HasID, ID: C})
		must(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: rsp + 300, Thread: cb, Has: HasID, ID: E})
		ts = rsp + 400
	}
	for i := 0; ; i++ {
		any := false
		for _, k := range kernels {
			if i < len(k.execs) {
				launch(k.id, k.execs[i])
				any = true
			}
		}
		if i < len(h2d) {
			copyH2D(h2d[i])
			any = true
		}
		if !any {
			break
		}
	}
	must(&Event{Type: TypeInstant, Class: ClassEndProfiling, TimeNS: ts + 1000, Thread: mainT})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), kernelmap.New(entries...)
}

// noisyExecs draws n exec times around centre with ±10% uniform noise.
func noisyExecs(r *rand.Rand, n int, centre float64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(centre * (0.9 + 0.2*r.Float64()))
	}
	return out
}

func collect(t *testing.T, data []byte, km *kernelmap.Map) *Samples {
	t.Helper()
	var w Warnings
	s, err := CollectSamples(bytes.NewReader(data), Options{File: "t", Warnings: &w}, JoinOptions{Kernels: km})
	if err != nil {
		t.Fatal(err)
	}
	if w.Len() != 0 {
		t.Fatalf("warnings: %v", w.List())
	}
	return s
}

func rowByName(res *DiffResult, kind, name string) *DiffRow {
	for i := range res.Rows {
		if res.Rows[i].Kind == kind && res.Rows[i].Name == name {
			return &res.Rows[i]
		}
	}
	return nil
}

func TestDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	opts := DiffOptions{Threshold: 0.05, Alpha: 0.05}
	base, bkm := buildDiffTrace(t, 1000, []diffKernel{
		{"mul_mat_f32", 0, noisyExecs(r, 12, 100_000)},
		{"add_f32", 1, noisyExecs(r, 12, 5_000)},
		{"old_kernel", 2, noisyExecs(r, 3, 1_000)},
	}, noisyExecs(r, 8, 20_000))
	// New: mul_mat 30% slower, add_f32 redrawn from the same
	// distribution, old_kernel gone, new_kernel new; the ids differ from
	// the base run (ids are per run: names are what is compared).
	newT, nkm := buildDiffTrace(t, 1000, []diffKernel{
		{"add_f32", 0, noisyExecs(r, 12, 5_000)},
		{"mul_mat_f32", 1, noisyExecs(r, 12, 130_000)},
		{"new_kernel", 2, noisyExecs(r, 2, 1_000)},
	}, noisyExecs(r, 8, 20_000))
	res := Diff(collect(t, base, bkm), collect(t, newT, nkm), opts)
	if res.Unit != UnitNS {
		t.Errorf("unit = %s, want ns", res.Unit)
	}
	want := map[string]Verdict{"mul_mat_f32": VerdictSlower, "add_f32": VerdictSame, "old_kernel": VerdictGone, "new_kernel": VerdictNew}
	for name, v := range want {
		row := rowByName(res, "kernel", name)
		if row == nil {
			t.Fatalf("no row for %s: %+v", name, res.Rows)
		}
		if row.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s", name, row.Verdict, row.Reason, v)
		}
	}
	mm := rowByName(res, "kernel", "mul_mat_f32")
	if mm.PValue == nil || *mm.PValue >= 0.05 || mm.ChangePct == nil || *mm.ChangePct < 20 || *mm.ChangePct > 40 {
		t.Errorf("mul_mat_f32: p %v change %v", mm.PValue, mm.ChangePct)
	}
	if mm.Base.Count != 12 || mm.New.Count != 12 || mm.Base.MedianExecNS == nil || *mm.Base.MedianExecNS != mm.Base.MedianExecCycles {
		t.Errorf("mul_mat_f32 sides: %+v %+v", mm.Base, mm.New)
	}
	if c := rowByName(res, "copy", "H2D"); c == nil || c.Verdict != VerdictSame || c.Base.Count != 8 {
		t.Errorf("H2D row: %+v", c)
	}
	if !res.Regression() || res.Counts[VerdictSlower] != 1 {
		t.Errorf("counts %v, regression %v", res.Counts, res.Regression())
	}
	// Rows: kernels first, by the larger total time.
	if res.Rows[0].Name != "mul_mat_f32" || res.Rows[len(res.Rows)-1].Kind != "copy" {
		t.Errorf("row order: %v", rowNames(res))
	}

	// The same trace against itself is all "same" and no regression.
	self := Diff(collect(t, base, bkm), collect(t, base, bkm), opts)
	if self.Regression() || self.Counts[VerdictSame] != len(self.Rows) {
		t.Errorf("self diff: %v", self.Counts)
	}
}

func rowNames(res *DiffResult) []string {
	var out []string
	for _, r := range res.Rows {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

// Two runs of the generator with different seeds draw every kernel's exec
// time from the same distribution: pure noise, so no verdict may be
// slower or faster.
func TestDiffGeneratedNoise(t *testing.T) {
	gen := func(seed int64) *Samples {
		var buf bytes.Buffer
		res, err := Generate(&buf, GenOptions{Ops: 600, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return collect(t, buf.Bytes(), kernelmap.New(res.Kernels...))
	}
	res := Diff(gen(1), gen(2), DiffOptions{Threshold: 0.05, Alpha: 0.05})
	if len(res.Rows) < 8 {
		t.Fatalf("too few rows: %v", rowNames(res))
	}
	for _, row := range res.Rows {
		if row.Verdict != VerdictSame {
			t.Errorf("%s %s: %s (%s, change %v%%, p %v)", row.Kind, row.Name, row.Verdict, row.Reason, deref(row.ChangePct), deref(row.PValue))
		}
	}
	if res.Regression() {
		t.Errorf("noise reported as a regression")
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestDiffFewSamplesAndUnits(t *testing.T) {
	// One launch per kernel: the threshold alone decides, and a note says so.
	base, km := buildDiffTrace(t, 0, []diffKernel{{"k", 0, []uint64{1000}}}, nil)
	slow, _ := buildDiffTrace(t, 0, []diffKernel{{"k", 0, []uint64{1200}}}, nil)
	res := Diff(collect(t, base, km), collect(t, slow, km), DiffOptions{Threshold: 0.05, Alpha: 0.05, MinTimeNS: 1e9})
	row := rowByName(res, "kernel", "k")
	if row.Verdict != VerdictSlower || row.PValue != nil {
		t.Errorf("single-sample row: %+v", row)
	}
	if res.Unit != UnitCycles || row.Base.MedianExecNS != nil {
		t.Errorf("without a frequency the unit should be cycles and ns absent: %s %+v", res.Unit, row.Base)
	}
	if len(res.Notes) != 3 {
		t.Errorf("notes: %q", res.Notes)
	}

	// With a frequency, --min-time keeps short kernels from being called.
	base, km = buildDiffTrace(t, 1000, []diffKernel{{"k", 0, []uint64{500}}}, nil)
	slow, _ = buildDiffTrace(t, 1000, []diffKernel{{"k", 0, []uint64{900}}}, nil)
	res = Diff(collect(t, base, km), collect(t, slow, km), DiffOptions{Threshold: 0.05, Alpha: 0.05, MinTimeNS: 1000})
	if row := rowByName(res, "kernel", "k"); row.Verdict != VerdictSame || row.Reason != "below min-time" {
		t.Errorf("min-time row: %+v", row)
	}
}

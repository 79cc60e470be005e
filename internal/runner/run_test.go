package runner

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/graph"
)

// TestFinite: run-op's JSON never carries NaN or ±Inf (an output the
// kernel never wrote gives an infinite NMSE), which encoding/json refuses:
// ±Inf is the largest float of its sign, NaN is null (never 0, which a
// script would read as a perfect result), and null reads back as NaN.
func TestFinite(t *testing.T) {
	for _, tt := range []struct {
		name      string
		in        float64
		json, csv string
	}{
		{"nan", math.NaN(), "null", ""},
		{"+inf", math.Inf(1), "1.7976931348623157e+308", "1.7976931348623157e+308"},
		{"-inf", math.Inf(-1), "-1.7976931348623157e+308", "-1.7976931348623157e+308"},
		{"finite", 0.25, "0.25", "0.25"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := finite(tt.in)
			b, err := json.Marshal(Result{NMSE: got, MaxAbsErr: got, DriftNMSE: got})
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"nmse", "max_abs_err", "drift_nmse"} {
				if want := `"` + key + `":` + tt.json; !strings.Contains(string(b), want+`,`) && !strings.Contains(string(b), want+`}`) {
					t.Errorf("%s: want %s in %s", key, want, b)
				}
			}
			var back Result
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if g, w := float64(back.NMSE), float64(got); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("read back %v, want %v", g, w)
			}
			if c, _ := got.MarshalText(); string(c) != tt.csv {
				t.Errorf("csv cell %q, want %q", c, tt.csv)
			}
		})
	}
}

// corruptingDevice flips a bit of every launch's params bytes.
type corruptingDevice struct{ *ref.Device }

func (d corruptingDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	b := slices.Clone(args)
	b[24] ^= 1 // inside the first tensor field's ne
	return d.Device.Launch(ctx, k, b, opts)
}

func planOne(t *testing.T, s string) []*Planned {
	t.Helper()
	c, err := graph.ParseCaseString(s)
	if err != nil {
		t.Fatal(err)
	}
	planned, bad, err := PlanAll([]*graph.Case{c}, PlanOptions{}, nil)
	if err != nil || len(bad) > 0 {
		t.Fatalf("plan: %v %v", err, bad)
	}
	return planned
}

// On the reference device the report says what was checked: the
// numerics are the reference's, every launch's params were decoded and
// compared, and a launch whose bytes decode to other values is an ABI
// mismatch that fails the run.
func TestReferenceDeviceChecksTheABI(t *testing.T) {
	planned := planOne(t, "RMS_NORM(type=f32,ne=[64,5,4,3])")
	out, err := Run(context.Background(), []driver.Device{ref.New(ref.Options{})}, planned, Options{Backend: "ref", Perf: exec.PerfOptions{Runs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Report
	if r.Numerics != "reference" || r.ABIChecked != 1 || r.Failed() || len(r.Perf) != 1 || r.Perf[0].Clock != "host" {
		t.Errorf("report %+v", r)
	}
	out, err = Run(context.Background(), []driver.Device{corruptingDevice{ref.New(ref.Options{})}}, planned, Options{Backend: "ref"})
	if err != nil {
		t.Fatal(err)
	}
	r = out.Report
	if len(r.ABIMismatches) != 1 || !r.Failed() || len(r.ABIMismatches[0].Fields) == 0 || r.ABIMismatches[0].Kernel != "rms_norm_f32" {
		t.Errorf("corrupted params: report %+v", r)
	}
}

// A plan runs twice with the same results: the runner binds each case's
// data afresh for the run and gives the plan back as it was planned.
func TestPlannedRunsTwice(t *testing.T) {
	planned := planOne(t, "SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1)")
	var got [2]Report
	for i := range got {
		out, err := Run(context.Background(), []driver.Device{ref.New(ref.Options{})}, planned, Options{Backend: "ref"})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = out.Report
		for k := range got[i].Results {
			got[i].Results[k].TimeNS = 0 // the one thing that may differ
		}
	}
	a, _ := json.Marshal(got[0])
	b, _ := json.Marshal(got[1])
	if string(a) != string(b) {
		t.Errorf("second run differs:\n%s\n%s", a, b)
	}
}

func TestWriteNpy(t *testing.T) {
	x := ops.FromF32(ops.F16, []int64{3, 2}, []float32{0, 1, 2, 3, 4, 5})
	path := filepath.Join(t.TempDir(), "out.npy")
	if err := WriteNpy(context.Background(), path, ops.Transpose(x)); err != nil {
		t.Fatal(err)
	}
	a, err := graph.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := a.Float32s()
	// The transpose has ne [2, 3]: numpy shape (3, 2), rows are x's columns.
	if !reflect.DeepEqual(a.Shape, []int64{3, 2}) || !reflect.DeepEqual(got, []float32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("shape %v data %v", a.Shape, got)
	}
}

// --save-inputs: the saved case.yaml and .npy files replay exactly the
// run: every leaf holds the same bytes (quantized ones re-quantize to the
// same blocks) and every output the same result.
func TestSaveInputsReplays(t *testing.T) {
	for _, s := range []string{
		"MUL_MAT(type_a=q8_0,type_b=f32,m=64,n=3,k=64)",
		"MUL_MAT(type_a=q4_0,type_b=f32,m=32,n=2,k=64)",
		"MUL_MAT(type_a=q4_K,type_b=f32,m=16,n=2,k=256)",
		"GET_ROWS(type=f16,n=256,m=5,r=4,b=1,v=0)",
		"SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1,m_prec=f32,nr23=[1,1],scale=0.1,max_bias=8)",
		"ROPE(type=f32,ne_a=[128,4,2,1],n_dims=128,mode=2,n_ctx=512,fs=1.4245,ef=0.7465,af=1.4245,ff=1,v=0,inplace=0)",
	} {
		t.Run(s, func(t *testing.T) {
			dir := t.TempDir()
			planned := planOne(t, s)
			first, err := Run(context.Background(), []driver.Device{ref.New(ref.Options{})}, planned, Options{Backend: "ref", SaveInputs: dir})
			if err != nil || first.LateErr != nil {
				t.Fatalf("run: %v %v", err, first.LateErr)
			}
			orig := planned[0]
			unbind, err := orig.bind(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer unbind()
			saved, err := graph.Load(filepath.Join(dir, "case.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			replay, err := PlanCase(saved, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			unbindReplay, err := replay.bind(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, ts := range planned[0].Case.Tensors {
				a, _ := orig.Graph.Lookup(ts.Name)
				b, ok := replay.Graph.Lookup(ts.Name)
				if !ok || !slices.Equal(orig.Graph.Values[a].T.Buf, replay.Graph.Values[b].T.Buf) {
					t.Errorf("leaf %s (%s) differs after the replay", ts.Name, ts.Type)
				}
			}
			unbindReplay()
			second, err := Run(context.Background(), []driver.Device{ref.New(ref.Options{})}, []*Planned{replay}, Options{Backend: "ref"})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range first.Report.Results {
				q := second.Report.Results[i]
				if r.Status != q.Status || r.NMSE != q.NMSE || r.Output != q.Output {
					t.Errorf("output %s: %s %g, replayed %s %g", r.Output, r.Status, r.NMSE, q.Status, q.NMSE)
				}
			}
		})
	}
}

// maskRecorder records the shire mask of every launch.
type maskRecorder struct {
	*ref.Device
	masks []uint64
}

func (d *maskRecorder) Launch(ctx context.Context, k driver.KernelID, args []byte, o driver.LaunchOptions) error {
	d.masks = append(d.masks, o.ShireMask)
	return d.Device.Launch(ctx, k, args, o)
}

// TestRunRunsThePlan: a case is planned once; Run runs that plan (here
// one planned on shire 0 alone, whatever the run's own options say) with
// the case's data bound to its leaves, and leaves them as planned (zero)
// afterwards.
func TestRunRunsThePlan(t *testing.T) {
	c, err := graph.ParseCaseString("RMS_NORM(type=f32,ne=[64,5,4,3])")
	if err != nil {
		t.Fatal(err)
	}
	planned, bad, err := PlanAll([]*graph.Case{c}, PlanOptions{ShireMask: 0x1}, nil)
	if err != nil || len(bad) > 0 {
		t.Fatalf("plan: %v %v", err, bad)
	}
	dev := &maskRecorder{Device: ref.New(ref.Options{})}
	out, err := Run(context.Background(), []driver.Device{dev}, planned, Options{Backend: "ref"})
	if err != nil {
		t.Fatal(err)
	}
	if len(dev.masks) == 0 || slices.ContainsFunc(dev.masks, func(m uint64) bool { return m != 0x1 }) || out.Report.Failed() {
		t.Errorf("launch masks %#x, report %+v: want the planned mask 0x1 and a pass", dev.masks, out.Report)
	}
	g := planned[0].Graph
	for _, ts := range c.Tensors {
		i, _ := g.Lookup(ts.Name)
		if slices.ContainsFunc(g.Values[i].T.Buf, func(b byte) bool { return b != 0 }) {
			t.Errorf("leaf %s keeps the run's data", ts.Name)
		}
	}
}

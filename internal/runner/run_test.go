package runner

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops/exec"
	"github.com/ainekko/et/internal/ops/graph"
)

// TestFinite: run-op's JSON never carries NaN or ±Inf (an output the
// kernel never wrote gives an infinite NMSE), which encoding/json refuses.
func TestFinite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in, out float64
	}{
		{"nan", math.NaN(), 0},
		{"+inf", math.Inf(1), math.MaxFloat64},
		{"-inf", math.Inf(-1), -math.MaxFloat64},
		{"finite", 0.25, 0.25},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := finite(tt.in)
			if got != tt.out {
				t.Errorf("finite(%v) = %v, want %v", tt.in, got, tt.out)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Error(err)
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

// A plan runs twice with the same results: the runner builds each case's
// data afresh and the plans are never written.
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

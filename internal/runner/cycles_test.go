package runner

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/exec"
	trace "github.com/ainekko/et/internal/profile"
)

// traced is a trace's launches of the given kernels with the given exec
// cycles, all responded, at 1000 MHz.
func traced(kernels []string, cycles []uint64) []trace.Launch {
	var out []trace.Launch
	for i, k := range kernels {
		out = append(out, trace.Launch{Kernel: k, ExecCycles: cycles[i], FreqMHz: 1000, Status: trace.SeenAPI | trace.SeenResponse})
	}
	return out
}

// TestAssignCycles: the trace's launches are matched in order to the
// judged launches, then per segment its untimed and timed runs; the timed
// runs' cycles give the median, min and max.
func TestAssignCycles(t *testing.T) {
	res := &exec.Result{
		Launches: []exec.LaunchRecord{{Kernel: "a"}, {Kernel: "b"}},
		Perf:     []exec.PerfResult{{Kernel: "a", Untimed: 1, Runs: 3, Batch: 1}, {Kernel: "b", Untimed: 2, Runs: 1, Batch: 2}},
	}
	tr := traced([]string{"a", "b", "a", "a", "a", "a", "b", "b", "b", "b"},
		[]uint64{10, 20, 99, 12, 11, 13, 98, 97, 21, 23})
	launches := []Launch{{}, {}}
	perf := []Timing{{}, {}}
	if err := assignCycles(tr, res, launches, perf); err != nil {
		t.Fatal(err)
	}
	if launches[0].ExecCycles != 10 || launches[1].ExecCycles != 20 || launches[1].DeviceNS != 20 {
		t.Errorf("launches %+v", launches)
	}
	if p := perf[0]; p.MedCycles != 12 || p.MinCycles != 11 || p.MaxCycles != 13 || p.MedDeviceNS != 12 {
		t.Errorf("perf a %+v, want 12 [11, 13] (the warm-up's 99 left out)", p)
	}
	if p := perf[1]; p.MinCycles != 21 || p.MaxCycles != 23 {
		t.Errorf("perf b %+v, want [21, 23] (two batch launches after two untimed)", p)
	}

	// A trace that is not the case's is refused, nothing changed.
	for name, tc := range map[string][]trace.Launch{
		"count":  tr[:9],
		"kernel": traced([]string{"b", "a", "a", "a", "a", "a", "b", "b", "b", "b"}, make([]uint64, 10)),
	} {
		l := []Launch{{}, {}}
		p := []Timing{{}, {}}
		err := assignCycles(tc, res, l, p)
		if err == nil || !strings.Contains(err.Error(), "device cycles") || l[0].ExecCycles != 0 || p[0].MedCycles != 0 {
			t.Errorf("%s: err %v, launches %+v", name, err, l)
		}
	}
}

// TestEfficiency: FLOPs and bytes per cycle against the peaks, the bound
// the larger share.
func TestEfficiency(t *testing.T) {
	tm := &Timing{Flops: 1 << 20, Bytes: 1 << 16, MedCycles: 1024, Shires: 2}
	e := efficiency(tm, propsFor(128000, 1000))
	// 1024 FLOP/cycle against 16 × 32 × 2 = 1024; 64 B/cycle against 128.
	if e.FlopsPerCycle != 1024 || e.PeakFlopsPerCycle != 1024 || e.FlopsPct != 100 || e.BytesPct != 50 || e.Bound != "compute" || e.PeakPct != 100 {
		t.Errorf("%+v", e)
	}
	tm.Flops = 0
	if e := efficiency(tm, propsFor(128000, 1000)); e.Bound != "memory" || e.PeakPct != 50 {
		t.Errorf("no flops: %+v", e)
	}
	if efficiency(&Timing{Bytes: 1}, propsFor(128000, 1000)) != nil {
		t.Error("efficiency without cycles")
	}
}

func propsFor(mbps, mhz uint32) driver.Props {
	return driver.Props{MemoryBandwidthMBps: mbps, FrequencyMHz: mhz}
}

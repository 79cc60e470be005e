//go:build sysemu

package main

import "testing"

// TestSysemuPerfCyclesDeterministic: on the real emulator, run-op --perf
// reports every launch's device exec cycles from the runtime's profiler,
// and two runs of the same case give identical cycles (the emulator's
// cycles are exact), whatever the host's wall times; a third run with
// --profile DIR takes them from DIR's trace of the whole run: the same.
func TestSysemuPerfCyclesDeterministic(t *testing.T) {
	const str = "RMS_NORM(type=f32,ne=[4096,7,1,1],v=0,eps=0.000001)"
	var cycles [3][]uint64
	for i := range cycles {
		args := []string{str, "--perf", "--perf-runs", "2", "--perf-warmup", "1", "--perf-time", "0"}
		if i == 2 {
			args = append(args, "--profile", t.TempDir())
		}
		code, doc, errOut := runSysemu(t, args...)
		if code != 0 || len(doc.Perf) != 1 || len(doc.Launches) != 1 {
			t.Fatalf("run %d: exit %d, perf %+v, launches %+v (%s)", i, code, doc.Perf, doc.Launches, errOut)
		}
		p, l := doc.Perf[0], doc.Launches[0]
		t.Logf("run %d: launch %d cycles (%d ns wall); timed runs %d [%d, %d] cycles, %d ns at %d MHz, %.1f%% of peak",
			i, l.ExecCycles, l.WallNS, p.MedCycles, p.MinCycles, p.MaxCycles, p.MedDeviceNS, p.FreqMHz, p.Efficiency.PeakPct)
		if l.ExecCycles == 0 || p.MedCycles == 0 || p.FreqMHz == 0 || p.MedDeviceNS == 0 || p.Efficiency == nil {
			t.Fatalf("run %d: no device cycles: %+v %+v", i, p, l)
		}
		cycles[i] = []uint64{l.ExecCycles, p.MedCycles, p.MinCycles, p.MaxCycles}
	}
	for i := 1; i < len(cycles); i++ {
		for k := range cycles[0] {
			if cycles[0][k] != cycles[i][k] {
				t.Errorf("cycles differ between runs: %v and %v (launch, median, min, max; run 2 with --profile)", cycles[0], cycles[i])
				break
			}
		}
	}
}

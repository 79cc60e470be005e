package runner

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/ops/exec"
	trace "github.com/ainekko/et/internal/profile"
)

// This file measures every launch of a --perf run in device cycles: on a
// device whose runtime has a profiler (driver.Profiler: sysemu and cards
// through the ET runtime), each case runs with the profiler on, into a
// temporary directory; its trace's launches (KernelLaunch joined with the
// ResponseReceived that carries device_cmd_exec_dur, reference
// et-runtime-trace.md §2) are then matched, in launch order, to the
// launches the case made: its judged launches, then per segment the
// untimed and the timed perf runs.

// Launch is one launch of a case's judged run: the nodes it computed,
// the host wall time from launch to sync and, with --perf on a device
// with a runtime profiler, the device's execution cycles.
type Launch struct {
	Case   string   `json:"case"`
	Nodes  []string `json:"nodes"`
	Kernel string   `json:"kernel"`
	WallNS int64    `json:"wall_ns"`
	// ExecCycles is the device's execution time of the launch in cycles
	// of its minion clock (0: not measured); DeviceNS the same in ns at
	// FreqMHz.
	ExecCycles uint64 `json:"exec_cycles,omitempty"`
	DeviceNS   int64  `json:"device_ns,omitempty"`
	FreqMHz    uint32 `json:"frequency_mhz,omitempty"`
	// Shires is how many compute shires the launch ran on.
	Shires int `json:"shires"`
}

// caseCycles is one case's runtime profiler, started before its run.
type caseCycles struct {
	dir   string
	pr    driver.Profiler
	loads *kernelLoads
	freq  uint32
}

// startCycles starts the runtime profiler of dev for one case when the
// run measures cycles and dev has one; it returns the device the case
// must run on (dev logging its kernel loads) and nil when nothing is
// measured.
func startCycles(ctx context.Context, dev driver.Device, o *Options) (*caseCycles, driver.Device, error) {
	pr, ok := dev.(driver.Profiler)
	if !o.Cycles || !ok {
		return nil, dev, nil
	}
	dir, err := os.MkdirTemp("", "et-cycles-")
	if err != nil {
		return nil, nil, fmt.Errorf("device cycles: %w", err)
	}
	if err := pr.StartProfile(ctx, dir); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("device cycles: start the runtime profiler: %w", err)
	}
	c := &caseCycles{dir: dir, pr: pr, loads: &kernelLoads{Device: dev}, freq: dev.Info().Props.FrequencyMHz}
	return c, c.loads, nil
}

// stop stops the profiler (after the device's work) and returns the
// launches of its trace in launch order. The directory is removed.
func (c *caseCycles) stop(ctx context.Context) ([]trace.Launch, error) {
	defer os.RemoveAll(c.dir)
	if err := c.pr.StopProfile(ctx); err != nil {
		return nil, fmt.Errorf("device cycles: stop the runtime profiler: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, driver.ProfileTraceFile))
	if err != nil {
		return nil, fmt.Errorf("device cycles: %w", err)
	}
	return traceLaunches(b, kernelmap.New(c.loads.entries...), c.freq)
}

// stopQuietly stops the profiler of a case that failed: its trace is
// not read.
func (c *caseCycles) stopQuietly(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), profileStopTimeout)
	defer cancel()
	c.pr.StopProfile(ctx)
	os.RemoveAll(c.dir)
}

// traceLaunches decodes a runtime trace and returns its kernel launches
// in the order they were made (KernelLaunch time, then event id), named
// by km, each with its device frequency (freq when the trace has none).
func traceLaunches(data []byte, km *kernelmap.Map, freq uint32) ([]trace.Launch, error) {
	var out []trace.Launch
	j := trace.NewJoiner(trace.JoinOptions{Kernels: km, FreqMHz: freq, OnLaunch: func(l *trace.Launch) {
		out = append(out, *l)
	}})
	if _, err := trace.Decode(bytes.NewReader(data), trace.Options{File: driver.ProfileTraceFile}, func(e trace.Event) error {
		j.Add(&e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("device cycles: %w", err)
	}
	j.Flush()
	slices.SortStableFunc(out, func(a, b trace.Launch) int {
		if a.LaunchNS != b.LaunchNS {
			return cmp.Compare(a.LaunchNS, b.LaunchNS)
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out, nil
}

// assignCycles matches the trace's launches to the case's, in order:
// res.Launches (the judged run), then per perf segment its Untimed
// launches and its Runs×Batch timed ones. It fills each Launch's cycles
// and each Timing's cycle figures, and fails, changing nothing, when the
// trace's launches are not the case's (count or kernel names).
func assignCycles(traced []trace.Launch, res *exec.Result, launches []Launch, perf []Timing) error {
	want := len(res.Launches)
	for _, p := range res.Perf {
		want += p.Untimed + p.Runs*p.Batch
	}
	if len(traced) != want {
		return fmt.Errorf("device cycles: the runtime traced %d launches, the case made %d", len(traced), want)
	}
	for i, l := range traced {
		if l.Status&trace.SeenResponse == 0 {
			return fmt.Errorf("device cycles: launch %d (%s) has no device response in the trace", i+1, l.Kernel)
		}
	}
	next := 0
	for i := range res.Launches {
		if traced[i].Kernel != res.Launches[i].Kernel {
			return fmt.Errorf("device cycles: launch %d is %s in the trace, %s in the run", i+1, traced[i].Kernel, res.Launches[i].Kernel)
		}
	}
	next = len(res.Launches)
	timed := make([][]uint64, len(res.Perf))
	for k, p := range res.Perf {
		next += p.Untimed
		for i := range p.Runs * p.Batch {
			l := traced[next+i]
			if l.Kernel != p.Kernel {
				return fmt.Errorf("device cycles: perf launch of %s is %s in the trace", p.Kernel, l.Kernel)
			}
			timed[k] = append(timed[k], l.ExecCycles)
		}
		next += p.Runs * p.Batch
	}
	for i := range launches {
		l := traced[i]
		launches[i].ExecCycles, launches[i].FreqMHz = l.ExecCycles, l.FreqMHz
		launches[i].DeviceNS = trace.CyclesToNS(l.ExecCycles, l.FreqMHz)
	}
	for k := range perf {
		c := timed[k]
		slices.Sort(c)
		t := &perf[k]
		t.MinCycles, t.MaxCycles, t.MedCycles = c[0], c[len(c)-1], c[len(c)/2]
		t.FreqMHz = traced[0].FreqMHz
		t.MedDeviceNS = trace.CyclesToNS(t.MedCycles, t.FreqMHz)
	}
	return nil
}

// caseRun is a case that reached the device: its run (nil: it stopped
// after an unknown number of launches) and the index of its first launch
// and perf rows in the report.
type caseRun struct {
	res          *exec.Result
	props        driver.Props
	launch, perf int
}

// traceCycles fills the cycles of every case's rows from one trace of the
// whole run (--profile with --perf), its launches matched to the cases'
// in order. It stops at a case that stopped early (a fault: how many
// launches it made is unknown), with an error saying so.
func (o *Outcome) traceCycles(traced []trace.Launch) error {
	r := &o.Report
	for _, c := range o.runs {
		if c.res == nil {
			return fmt.Errorf("device cycles: a case stopped early; the cases after it have none")
		}
		n := len(c.res.Launches)
		for _, p := range c.res.Perf {
			n += p.Untimed + p.Runs*p.Batch
		}
		if n > len(traced) {
			return fmt.Errorf("device cycles: the runtime traced fewer launches than the run made")
		}
		perf := r.Perf[c.perf : c.perf+len(c.res.Perf)]
		if err := assignCycles(traced[:n], c.res, r.Launches[c.launch:c.launch+len(c.res.Launches)], perf); err != nil {
			return err
		}
		for i := range perf {
			perf[i].Efficiency = efficiency(&perf[i], c.props)
		}
		traced = traced[n:]
	}
	return nil
}

// newLaunches are the report rows of a case's judged launches (wall time
// only; assignCycles adds the cycles), on a device with props.
func newLaunches(name string, res *exec.Result, props driver.Props) []Launch {
	out := make([]Launch, 0, len(res.Launches))
	for _, l := range res.Launches {
		out = append(out, Launch{Case: name, Nodes: l.Nodes, Kernel: l.Kernel, WallNS: l.End.Sub(l.Start).Nanoseconds(),
			Shires: shiresOf(l.ShireMask, props)})
	}
	return out
}

// shiresOf is the number of compute shires a launch with mask runs on
// (0: the device's whole mask, else 32 as ET-SoC-1 has).
func shiresOf(mask uint32, props driver.Props) int {
	if mask == 0 {
		mask = props.ComputeShireMask
	}
	if mask == 0 {
		return 32
	}
	return bits.OnesCount32(mask)
}

// Phases split a run's wall time (et run-op --perf): booting the
// devices, generating or reading the inputs, uploads (buffers, inputs,
// kernel code), the judged launches, the perf runs' launches, downloads,
// judging (reference math, host fallbacks, comparing) and the rest
// (planning was before; profiler traces, freeing, reporting). They add up
// to TotalNS; with --jobs N the phases are summed over the jobs, so they
// may add up to more than the wall time, and OtherNS is then 0.
type Phases struct {
	BootNS     int64 `json:"boot_ns"`
	InputsNS   int64 `json:"inputs_ns"`
	UploadNS   int64 `json:"upload_ns"`
	LaunchNS   int64 `json:"launch_ns"`
	PerfNS     int64 `json:"perf_ns"`
	DownloadNS int64 `json:"download_ns"`
	JudgeNS    int64 `json:"judge_ns"`
	OtherNS    int64 `json:"other_ns"`
	TotalNS    int64 `json:"total_ns"`
}

func (p *Phases) add(inputs time.Duration, e exec.Phases) {
	p.InputsNS += inputs.Nanoseconds()
	p.UploadNS += e.UploadNS
	p.LaunchNS += e.LaunchNS
	p.PerfNS += e.PerfNS
	p.DownloadNS += e.DownloadNS
	p.JudgeNS += e.JudgeNS
}

func (p *Phases) plus(q Phases) {
	p.BootNS += q.BootNS
	p.InputsNS += q.InputsNS
	p.UploadNS += q.UploadNS
	p.LaunchNS += q.LaunchNS
	p.PerfNS += q.PerfNS
	p.DownloadNS += q.DownloadNS
	p.JudgeNS += q.JudgeNS
}

// close sets the total and the rest.
func (p *Phases) close(total time.Duration) {
	p.TotalNS = total.Nanoseconds()
	p.OtherNS = max(0, p.TotalNS-(p.BootNS+p.InputsNS+p.UploadNS+p.LaunchNS+p.PerfNS+p.DownloadNS+p.JudgeNS))
}

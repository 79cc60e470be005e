package profile

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// This file compares two traces kernel by kernel and copy direction by
// copy direction (et profile diff): the device execution times of every
// launch form one sample per kernel and trace, and Compare (stats.go)
// turns two samples into a verdict.

// Samples are the device execution times of one trace, per kernel name and
// per copy direction. Memory grows with the number of launches and copies
// (one or two numbers each), not with the number of events.
type Samples struct {
	// Kernels and Copies map a kernel name or a direction to its sample.
	Kernels map[string]*Sample
	Copies  map[Direction]*Sample
	// Decode and Join are the statistics of reading the trace.
	Decode Stats
	Join   JoinStats
	// NoFreq counts records whose device frequency was unknown (their
	// times exist only in cycles).
	NoFreq int
	// Incomplete counts launches and copies that never reported device
	// times (a truncated trace): they are not in any sample.
	Incomplete int
}

// Sample is the measurements of one kernel (or direction) in one trace.
type Sample struct {
	// ExecCycles are the device execution times in cycles, and ExecNS the
	// same in ns (0 when the frequency is unknown), in completion order.
	ExecCycles []float64
	ExecNS     []float64
	// NoFreq counts measurements whose frequency was unknown.
	NoFreq int
}

// CollectSamples decodes a trace from r and gathers its samples. Only
// launches with a device response, and copies whose every DMA command
// responded, are measured.
func CollectSamples(r io.Reader, o Options, jo JoinOptions) (*Samples, error) {
	s := &Samples{Kernels: map[string]*Sample{}, Copies: map[Direction]*Sample{}}
	add := func(m *Sample, cycles uint64, ns int64, freq uint32) {
		m.ExecCycles = append(m.ExecCycles, float64(cycles))
		m.ExecNS = append(m.ExecNS, float64(ns))
		if freq == 0 {
			s.NoFreq++
			m.NoFreq++
		}
	}
	jo.Warnings = o.Warnings
	jo.OnLaunch = func(l *Launch) {
		if l.Status&SeenResponse == 0 {
			s.Incomplete++
			return
		}
		m := s.Kernels[l.Kernel]
		if m == nil {
			m = &Sample{}
			s.Kernels[l.Kernel] = m
		}
		add(m, l.ExecCycles, l.ExecNS(), l.FreqMHz)
	}
	jo.OnCopy = func(c *Copy) {
		if c.Responses == 0 || c.Responses < c.Commands {
			s.Incomplete++
			return
		}
		m := s.Copies[c.Direction]
		if m == nil {
			m = &Sample{}
			s.Copies[c.Direction] = m
		}
		add(m, c.DMAExecCycles, c.DMAExecNS(), c.FreqMHz)
	}
	j := NewJoiner(jo)
	st, err := Decode(r, o, func(e Event) error { j.Add(&e); return nil })
	s.Decode = st
	s.Join = j.Flush()
	return s, err
}

// DiffOptions decide what counts as a change.
type DiffOptions struct {
	// Threshold and Alpha are as in CompareOptions.
	Threshold float64
	Alpha     float64
	// MinTimeNS: kernels whose median exec is below it in both traces are
	// never called slower or faster. It applies only when times are
	// compared in ns.
	MinTimeNS float64
	// NoCorrection turns off the Holm-Bonferroni correction of the rank
	// tests across rows. With it on (the default), testing 40 kernels at
	// alpha 0.05 does not call one of them slower by chance a third of
	// the time.
	NoCorrection bool
}

// DiffUnit is the unit the samples were compared in.
type DiffUnit string

// Diff units: ns when every record of both traces had a device
// frequency, else cycles.
const (
	UnitNS     DiffUnit = "ns"
	UnitCycles DiffUnit = "cycles"
)

// DiffSide summarises one trace's sample of a row.
type DiffSide struct {
	Count int `json:"count"`
	// The _cycles fields are device cycles; the _ns fields are nil when
	// the frequency is unknown.
	MedianExecCycles float64  `json:"median_exec_cycles"`
	MeanExecCycles   float64  `json:"mean_exec_cycles"`
	TotalExecCycles  float64  `json:"total_exec_cycles"`
	MedianExecNS     *float64 `json:"median_exec_ns"`
	MeanExecNS       *float64 `json:"mean_exec_ns"`
	TotalExecNS      *float64 `json:"total_exec_ns"`
	// MedianLow and MedianHigh bound a distribution-free confidence
	// interval of the median (MedianInterval at 95%); MedianIntervalPct
	// is the coverage that interval has, below 95 for samples under 6
	// (the interval is then the sample's range; 0 for one launch).
	MedianLowExecCycles  float64  `json:"median_low_exec_cycles"`
	MedianHighExecCycles float64  `json:"median_high_exec_cycles"`
	MedianLowExecNS      *float64 `json:"median_low_exec_ns"`
	MedianHighExecNS     *float64 `json:"median_high_exec_ns"`
	MedianIntervalPct    float64  `json:"median_interval_pct"`
}

// MedianConfidence is the confidence of DiffSide's median interval.
const MedianConfidence = 0.95

// DiffRow is the comparison of one kernel or copy direction.
type DiffRow struct {
	// Kind is "kernel" or "copy"; Name is the kernel name or the
	// direction (H2D, D2H, D2D, internal).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Base and New are nil when the row is absent from that trace.
	Base *DiffSide `json:"base"`
	New  *DiffSide `json:"new"`
	// ChangePct is the change of the median in percent, nil when it is
	// undefined (a missing side, or a zero base median).
	ChangePct *float64 `json:"change_pct"`
	// PValue is the Mann-Whitney U p-value, nil when the samples were too
	// small for the test to reach alpha (the threshold alone decided).
	PValue  *float64 `json:"p_value"`
	Verdict Verdict  `json:"verdict"`
	Reason  string   `json:"reason"`
}

// DiffResult is the outcome of Diff.
type DiffResult struct {
	Unit DiffUnit
	Rows []DiffRow
	// Counts counts rows per verdict.
	Counts map[Verdict]int
	// Notes are remarks about the comparison as a whole.
	Notes []string
}

// Regression reports whether any row is slower.
func (r *DiffResult) Regression() bool { return r.Counts[VerdictSlower] > 0 }

// Diff compares two traces' samples. Rows are sorted by the larger of the
// two total execution times (descending), then kind and name.
func Diff(base, new *Samples, o DiffOptions) *DiffResult {
	res := &DiffResult{Unit: UnitNS, Counts: map[Verdict]int{}}
	if base.NoFreq > 0 || new.NoFreq > 0 {
		res.Unit = UnitCycles
		res.Notes = append(res.Notes, "device frequency unknown in a trace: times compared in device cycles")
		if o.MinTimeNS > 0 {
			res.Notes = append(res.Notes, "min-time ignored: it is a time and the comparison is in cycles")
		}
	}
	co := CompareOptions{Threshold: o.Threshold, Alpha: o.Alpha}
	if res.Unit == UnitNS {
		co.MinTime = o.MinTimeNS
	}
	pick := func(s *Sample) []float64 {
		if s == nil {
			return nil
		}
		if res.Unit == UnitNS {
			return s.ExecNS
		}
		return s.ExecCycles
	}
	thresholdOnly := 0
	addRow := func(kind, name string, b, n *Sample) {
		c := Compare(pick(b), pick(n), co)
		row := DiffRow{Kind: kind, Name: name, Base: side(b), New: side(n), Verdict: c.Verdict, Reason: c.Reason}
		if !math.IsNaN(c.Change) && !math.IsInf(c.Change, 0) {
			v := c.Change * 100
			row.ChangePct = &v
		}
		if c.Tested {
			p := c.P
			row.PValue = &p
		} else if c.Verdict == VerdictSlower || c.Verdict == VerdictFaster {
			thresholdOnly++
		}
		res.Rows = append(res.Rows, row)
		res.Counts[c.Verdict]++
	}
	for _, name := range unionKeys(base.Kernels, new.Kernels) {
		addRow("kernel", name, base.Kernels[name], new.Kernels[name])
	}
	for _, d := range Directions {
		b, n := base.Copies[d], new.Copies[d]
		if b == nil && n == nil {
			continue
		}
		addRow("copy", d.String(), b, n)
	}
	total := func(s *DiffSide) float64 {
		if s == nil {
			return 0
		}
		if res.Unit == UnitNS && s.TotalExecNS != nil {
			return *s.TotalExecNS
		}
		return s.TotalExecCycles
	}
	sort.SliceStable(res.Rows, func(i, j int) bool {
		a, b := &res.Rows[i], &res.Rows[j]
		if a.Kind != b.Kind {
			return a.Kind == "kernel"
		}
		ta := math.Max(total(a.Base), total(a.New))
		tb := math.Max(total(b.Base), total(b.New))
		if ta != tb {
			return ta > tb
		}
		return a.Name < b.Name
	})
	if thresholdOnly > 0 {
		res.Notes = append(res.Notes, "some verdicts rest on the threshold alone: too few samples for the rank test to reach alpha")
	}
	if !o.NoCorrection {
		holm(res, o.Alpha)
	}
	return res
}

// holm applies the Holm-Bonferroni step-down procedure to the rows that
// had a rank test: in increasing p order, the k-th of m tests (from 0)
// stays significant only while p <= alpha/(m-k); from the first that does
// not, every later one is not significant. Slower/faster verdicts of rows
// that lose significance become same.
func holm(res *DiffResult, alpha float64) {
	var tested []int
	for i := range res.Rows {
		if res.Rows[i].PValue != nil {
			tested = append(tested, i)
		}
	}
	m := len(tested)
	if m < 2 {
		return
	}
	sort.SliceStable(tested, func(a, b int) bool { return *res.Rows[tested[a]].PValue < *res.Rows[tested[b]].PValue })
	demoted := 0
	stop := false
	for k, i := range tested {
		row := &res.Rows[i]
		if !stop && *row.PValue <= alpha/float64(m-k) {
			continue
		}
		stop = true
		if row.Verdict == VerdictSlower || row.Verdict == VerdictFaster {
			res.Counts[row.Verdict]--
			res.Counts[VerdictSame]++
			row.Verdict = VerdictSame
			row.Reason = "not significant after Holm correction"
			demoted++
		}
	}
	if demoted > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d verdict(s) not significant after the Holm-Bonferroni correction for %d rank tests (--no-correction to see them)", demoted, m))
	}
}

func side(s *Sample) *DiffSide {
	if s == nil || len(s.ExecCycles) == 0 {
		return nil
	}
	c := Summarize(s.ExecCycles)
	d := &DiffSide{Count: c.N, MedianExecCycles: c.Median, MeanExecCycles: c.Mean, TotalExecCycles: c.Mean * float64(c.N)}
	lo, hi, level := MedianInterval(s.ExecCycles, MedianConfidence)
	d.MedianLowExecCycles, d.MedianHighExecCycles, d.MedianIntervalPct = lo, hi, 100*level
	if s.NoFreq == 0 {
		n := Summarize(s.ExecNS)
		med, mean, tot := n.Median, n.Mean, n.Mean*float64(n.N)
		d.MedianExecNS, d.MeanExecNS, d.TotalExecNS = &med, &mean, &tot
		lo, hi, _ := MedianInterval(s.ExecNS, MedianConfidence)
		d.MedianLowExecNS, d.MedianHighExecNS = &lo, &hi
	}
	return d
}

func unionKeys(a, b map[string]*Sample) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]*Sample{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

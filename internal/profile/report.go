package profile

import (
	"container/heap"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/kernelmap"
)

// View names for ReportOptions.Views.
const (
	ViewSummary = "summary"
	ViewKernels = "kernels"
	ViewMemcpy  = "memcpy"
	ViewGaps    = "gaps"
	ViewStreams = "streams"
	ViewSlowest = "slowest"
)

// AllViews lists the views in report order.
var AllViews = []string{ViewSummary, ViewKernels, ViewMemcpy, ViewGaps, ViewStreams, ViewSlowest}

// DefaultViews are shown when no view is requested.
var DefaultViews = []string{ViewSummary, ViewKernels, ViewMemcpy}

// ReportOptions configure a report.
type ReportOptions struct {
	// Views to compute (nil = DefaultViews). Data for views not asked for
	// is not kept.
	Views []string
	// Top is N for the gaps, slowest and streams lists (default 10).
	Top int
	// Device restricts launches and copies to one device; -1 for all.
	Device int
	// Kernels names kernel ids.
	Kernels *kernelmap.Map
	// FreqMHz overrides (OverrideFreq) or backs up device frequencies.
	FreqMHz      uint32
	OverrideFreq bool
	// KeepSamples keeps the per-launch exec samples in KernelRow.Samples
	// (for diffs); percentiles are computed either way.
	KeepSamples bool
}

func (o *ReportOptions) want(v string) bool {
	views := o.Views
	if len(views) == 0 {
		views = DefaultViews
	}
	for _, w := range views {
		if w == v {
			return true
		}
	}
	return false
}

// Report is the result of `et profile report` for one trace (or several
// merged): rows with raw values, for cmd/et to render.
type Report struct {
	Summary  ReportSummary    `json:"summary"`
	Kernels  []KernelRow      `json:"kernels"`
	Memcpy   []CopyRow        `json:"memcpy"`
	Gaps     []DeviceGaps     `json:"gaps"`
	Streams  []StreamCommands `json:"streams"`
	Slowest  []SlowLaunch     `json:"slowest"`
	Warnings []Warning        `json:"warnings"`
}

// ReportSummary is the header of a report.
type ReportSummary struct {
	Events    int   `json:"events"`
	Bytes     int64 `json:"trace_bytes"`
	Version   int   `json:"version"`
	Truncated bool  `json:"truncated"`
	// WindowNS is the time from StartProfiling (or the first event) to
	// the last event end.
	WindowNS           int64           `json:"window_ns"`
	Devices            []DeviceSummary `json:"devices"`
	Launches           int             `json:"launches"`
	IncompleteLaunches int             `json:"incomplete_launches"`
	Copies             int             `json:"copies"`
	IncompleteCopies   int             `json:"incomplete_copies"`
	UnmatchedResponses int             `json:"unmatched_responses"`
	IDWraps            int             `json:"id_wraps"`
	// HostWaitNS is host time blocked in WaitForEvent/WaitForStream.
	HostWaitNS  int64 `json:"host_wait_ns"`
	Waits       int   `json:"waits"`
	KernelNames int   `json:"kernel_names"`
	// UberkernelOnly is set when the only kernel is "uberkernel": per-op
	// attribution is then unavailable.
	UberkernelOnly bool `json:"uberkernel_only"`
	Warnings       int  `json:"warnings"`
}

// DeviceSummary is one device in the summary.
type DeviceSummary struct {
	ID       int    `json:"id"`
	FreqMHz  uint32 `json:"frequency_mhz"`
	Launches int    `json:"launches"`
	// BusyPercent is Σ kernel exec / (last end − first dispatch), device
	// cycles; -1 without launches.
	BusyPercent float64 `json:"busy_percent"`
	ExecCycles  uint64  `json:"exec_cycles"`
	SpanCycles  uint64  `json:"span_cycles"`
}

// KernelRow aggregates the launches of one kernel name.
type KernelRow struct {
	Name      string `json:"name"`
	KernelIDs []int  `json:"kernel_ids"`
	Launches  int    `json:"launches"`
	// Incomplete counts launches without response or dispatch (not in the
	// exec statistics when they have no response).
	Incomplete      int     `json:"incomplete"`
	TotalExecCycles uint64  `json:"total_exec_cycles"`
	TotalExecNS     int64   `json:"total_exec_ns"`
	MeanExecNS      int64   `json:"mean_exec_ns"`
	MinExecNS       int64   `json:"min_exec_ns"`
	MaxExecNS       int64   `json:"max_exec_ns"`
	P50ExecNS       int64   `json:"p50_exec_ns"`
	P95ExecNS       int64   `json:"p95_exec_ns"`
	ExecPercent     float64 `json:"exec_percent"`
	// TotalWaitNS is queue+barrier wait (device_cmd_wait_dur).
	TotalWaitNS int64 `json:"total_wait_ns"`
	MeanWaitNS  int64 `json:"mean_wait_ns"`
	// LaunchAPI is the host KernelLaunch duration.
	MeanLaunchAPINS int64 `json:"mean_launch_api_ns"`
	P95LaunchAPINS  int64 `json:"p95_launch_api_ns"`
	// SubmitDelay is CommandSent − KernelLaunch.
	MeanSubmitDelayNS int64 `json:"mean_submit_delay_ns"`
	// EndToEnd is DispatchEvent − KernelLaunch.
	MeanEndToEndNS int64 `json:"mean_end_to_end_ns"`
	P95EndToEndNS  int64 `json:"p95_end_to_end_ns"`
	// Samples are the exec times (ns) of the launches with a response, in
	// completion order; only with ReportOptions.KeepSamples.
	Samples []int64 `json:"-"`
}

// CopyRow aggregates the copies of one direction.
type CopyRow struct {
	Direction string `json:"direction"`
	Count     int    `json:"count"`
	// Bytes sums the sizes known (SizedCount copies).
	Bytes         uint64 `json:"total_bytes"`
	SizedCount    int    `json:"sized_count"`
	Commands      int    `json:"dma_commands"`
	APINS         int64  `json:"api_ns"`
	CMANS         int64  `json:"cma_ns"`
	DMAExecCycles uint64 `json:"dma_exec_cycles"`
	DMAExecNS     int64  `json:"dma_exec_ns"`
	DMAWaitNS     int64  `json:"dma_wait_ns"`
	// DeviceBytesPerSec is bytes / DMA exec time (sized copies only).
	DeviceBytesPerSec float64 `json:"device_bytes_per_sec"`
	// EndToEndNS sums DispatchEvent − API start of sized, complete copies;
	// EndToEndBytesPerSec is their bytes / that time.
	EndToEndNS          int64   `json:"end_to_end_ns"`
	EndToEndBytesPerSec float64 `json:"end_to_end_bytes_per_sec"`
	Incomplete          int     `json:"incomplete"`

	sizedExecNS int64
	e2eBytes    uint64
}

// DeviceGaps are the idle gaps between consecutive kernels on a device,
// in device cycles.
type DeviceGaps struct {
	Device         int    `json:"device"`
	FreqMHz        uint32 `json:"frequency_mhz"`
	Kernels        int    `json:"kernels"`
	Gaps           int    `json:"gaps"`
	TotalGapCycles uint64 `json:"total_gap_cycles"`
	// Overlaps counts kernels that started before the previous one ended.
	Overlaps  int         `json:"overlaps"`
	Histogram []GapBucket `json:"histogram"`
	Top       []Gap       `json:"top"`
}

// GapBucket counts gaps in [MinCycles, MaxCycles); MaxCycles 0 = no bound.
type GapBucket struct {
	MinCycles   uint64 `json:"min_cycles"`
	MaxCycles   uint64 `json:"max_cycles"`
	Count       int    `json:"count"`
	TotalCycles uint64 `json:"total_cycles"`
}

// Gap is one idle gap.
type Gap struct {
	Cycles uint64 `json:"gap_cycles"`
	NS     int64  `json:"gap_ns"`
	// AtCycles is the device time the gap starts (end of Before).
	AtCycles      uint64 `json:"at_cycles"`
	Before        string `json:"before"`
	After         string `json:"after"`
	BeforeEventID uint16 `json:"before_event_id"`
	AfterEventID  uint16 `json:"after_event_id"`
}

// StreamCommands is the ordered command list of one stream.
type StreamCommands struct {
	Device   int       `json:"device"`
	Stream   int       `json:"stream"`
	Total    int       `json:"total"`
	Commands []Command `json:"commands"`
}

// Command is one kernel or copy on a stream.
type Command struct {
	Kind    string `json:"kind"` // "kernel", "H2D", "D2H", "D2D", "internal"
	Name    string `json:"name"`
	EventID uint16 `json:"event_id"`
	// SubmitNS is the submission time relative to the trace start.
	SubmitNS int64 `json:"submit_ns"`
	// DispatchCycles is the device time the command started executing
	// (device_cmd_start_ts + wait; the first DMA command for copies).
	DispatchCycles uint64 `json:"dispatch_cycles"`
	WaitCycles     uint64 `json:"wait_cycles"`
	ExecCycles     uint64 `json:"exec_cycles"`
	Bytes          uint64 `json:"size_bytes,omitempty"`
}

// SlowLaunch is one of the slowest launches.
type SlowLaunch struct {
	Kernel   string `json:"kernel"`
	KernelID int    `json:"kernel_id"`
	EventID  uint16 `json:"event_id"`
	Device   int    `json:"device"`
	Stream   int    `json:"stream"`
	// LaunchNS is the KernelLaunch time relative to the trace start (-1
	// if unknown).
	LaunchNS    int64  `json:"launch_ns"`
	ExecCycles  uint64 `json:"exec_cycles"`
	ExecNS      int64  `json:"exec_ns"`
	WaitNS      int64  `json:"wait_ns"`
	EndToEndNS  int64  `json:"end_to_end_ns"`
	StartCycles uint64 `json:"start_cycles"`
}

type kernelAgg struct {
	row    KernelRow
	ids    map[int]bool
	exec   []int64
	api    []int64
	e2e    []int64
	subSum int64
	subN   int
	waitN  int
}

type interval struct {
	start, end uint64
	id         uint16
	name       int32
}

type devAgg struct {
	freq     uint32
	launches int
	exec     uint64
	// first and last bound the launches of the trace being fed (seen
	// when it has one); spans sums the spans of the traces fed before,
	// since merged traces each count their own span, not the range
	// from the earliest first to the latest last (two runs of the same
	// program cover the same cycles: busy would read 200%).
	first     uint64
	last      uint64
	seen      bool
	spans     uint64
	everSeen  bool
	intervals []interval
}

// span is the device's busy-time denominator: the spans of every trace.
func (d *devAgg) span() uint64 {
	s := d.spans
	if d.seen && d.last > d.first {
		s += d.last - d.first
	}
	return s
}

// endTrace closes the span of the trace just fed.
func (d *devAgg) endTrace() {
	if d.seen && d.last > d.first {
		d.spans += d.last - d.first
	}
	d.seen = false
}

type slowHeap []SlowLaunch

func (h slowHeap) Len() int { return len(h) }
func (h slowHeap) Less(i, j int) bool {
	if h[i].ExecCycles != h[j].ExecCycles {
		return h[i].ExecCycles < h[j].ExecCycles
	}
	return h[i].EventID > h[j].EventID
}
func (h slowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)   { *h = append(*h, x.(SlowLaunch)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Aggregator accumulates joined records from one or more traces into a
// Report. Feed it from a Joiner's callbacks (AddLaunch, AddCopy), then
// call Finish.
type Aggregator struct {
	opts     ReportOptions
	kernels  map[string]*kernelAgg
	copies   [4]CopyRow
	devs     map[int]*devAgg
	names    []string
	nameIdx  map[string]int32
	slow     slowHeap
	streams  map[[2]int]*StreamCommands
	startNS  int64 // of the trace being fed
	summary  ReportSummary
	warnings Warnings
	// known are the devices of the traces fed, whatever opts.Device.
	known map[int]bool
}

// NewAggregator returns an empty aggregator.
func NewAggregator(opts ReportOptions) *Aggregator {
	if opts.Top <= 0 {
		opts.Top = 10
	}
	a := &Aggregator{opts: opts, kernels: map[string]*kernelAgg{}, devs: map[int]*devAgg{},
		nameIdx: map[string]int32{}, streams: map[[2]int]*StreamCommands{}}
	for i, d := range Directions {
		a.copies[i].Direction = d.String()
	}
	return a
}

// SetStart sets the time origin (StartProfiling) of the trace being fed,
// for the relative times of the streams and slowest views.
func (a *Aggregator) SetStart(ns int64) { a.startNS = ns }

func (a *Aggregator) dev(id int, freq uint32) *devAgg {
	d := a.devs[id]
	if d == nil {
		d = &devAgg{freq: freq}
		a.devs[id] = d
	}
	if d.freq == 0 {
		d.freq = freq
	}
	return d
}

func (a *Aggregator) nameID(n string) int32 {
	if i, ok := a.nameIdx[n]; ok {
		return i
	}
	i := int32(len(a.names))
	a.names = append(a.names, n)
	a.nameIdx[n] = i
	return i
}

// AddLaunch adds one joined launch.
func (a *Aggregator) AddLaunch(l *Launch) {
	if a.opts.Device >= 0 && l.Device != a.opts.Device {
		return
	}
	k := a.kernels[l.Kernel]
	if k == nil {
		k = &kernelAgg{row: KernelRow{Name: l.Kernel}, ids: map[int]bool{}}
		a.kernels[l.Kernel] = k
	}
	r := &k.row
	r.Launches++
	if l.KernelID >= 0 && !k.ids[l.KernelID] {
		k.ids[l.KernelID] = true
		r.KernelIDs = append(r.KernelIDs, l.KernelID)
	}
	if !l.Complete() {
		r.Incomplete++
	}
	if l.Status&SeenResponse != 0 {
		ns := l.ExecNS()
		r.TotalExecCycles = satAdd(r.TotalExecCycles, l.ExecCycles)
		r.TotalExecNS = satAddNS(r.TotalExecNS, ns)
		r.TotalWaitNS += l.WaitNS()
		k.waitN++
		k.exec = append(k.exec, ns)
		d := a.dev(l.Device, l.FreqMHz)
		d.launches++
		d.exec = satAdd(d.exec, l.ExecCycles)
		st, end := l.DispatchCycles(), l.EndCycles()
		if !d.seen || st < d.first {
			d.first = st
		}
		if !d.seen || end > d.last {
			d.last = end
		}
		d.seen, d.everSeen = true, true
		if a.opts.want(ViewGaps) {
			d.intervals = append(d.intervals, interval{start: st, end: end, id: l.EventID, name: a.nameID(l.Kernel)})
		}
		if a.opts.want(ViewSlowest) {
			s := SlowLaunch{Kernel: l.Kernel, KernelID: l.KernelID, EventID: l.EventID, Device: l.Device, Stream: l.Stream,
				LaunchNS: -1, ExecCycles: l.ExecCycles, ExecNS: ns, WaitNS: l.WaitNS(), EndToEndNS: l.EndToEndNS(), StartCycles: st}
			if l.Status&SeenAPI != 0 {
				s.LaunchNS = l.LaunchNS - a.startNS
			}
			if len(a.slow) < a.opts.Top {
				heap.Push(&a.slow, s)
			} else if a.slow.Less(0, 0) || s.ExecCycles > a.slow[0].ExecCycles {
				a.slow[0] = s
				heap.Fix(&a.slow, 0)
			}
		}
	}
	if l.Status&SeenAPI != 0 {
		k.api = append(k.api, l.LaunchAPINS)
	}
	if v := l.SubmitDelayNS(); v >= 0 {
		k.subSum += v
		k.subN++
	}
	if v := l.EndToEndNS(); v >= 0 {
		k.e2e = append(k.e2e, v)
	}
	if a.opts.want(ViewStreams) {
		sub := l.SubmitNS
		if l.Status&SeenCommand == 0 {
			sub = l.LaunchNS
		}
		a.addCommand(l.Device, l.Stream, Command{Kind: "kernel", Name: l.Kernel, EventID: l.EventID, SubmitNS: sub - a.startNS,
			DispatchCycles: l.DispatchCycles(), WaitCycles: l.WaitCycles, ExecCycles: l.ExecCycles})
	}
}

func (a *Aggregator) addCommand(dev, stream int, c Command) {
	key := [2]int{dev, stream}
	s := a.streams[key]
	if s == nil {
		s = &StreamCommands{Device: dev, Stream: stream}
		a.streams[key] = s
	}
	s.Total++
	s.Commands = append(s.Commands, c)
}

// AddCopy adds one joined copy.
func (a *Aggregator) AddCopy(c *Copy) {
	if a.opts.Device >= 0 && c.Device != a.opts.Device {
		return
	}
	r := &a.copies[c.Direction]
	r.Count++
	r.Commands += c.Commands
	r.APINS += c.APIDurNS
	r.CMANS += c.CMANS
	r.DMAExecCycles += c.DMAExecCycles
	exec := c.DMAExecNS()
	r.DMAExecNS += exec
	r.DMAWaitNS += c.DMAWaitNS()
	if c.Status&SeenDispatch == 0 || c.Responses < c.Commands {
		r.Incomplete++
	}
	if c.SizeKnown {
		r.Bytes += c.Bytes
		r.SizedCount++
		r.sizedExecNS += exec
		if e := c.EndToEndNS(); e > 0 {
			r.EndToEndNS += e
			r.e2eBytes += c.Bytes
		}
	}
	if a.opts.want(ViewStreams) && c.Commands > 0 {
		a.addCommand(c.Device, c.Stream, Command{Kind: c.Direction.String(), Name: c.Class, EventID: c.EventID, SubmitNS: c.SubmitNS - a.startNS,
			DispatchCycles: c.FirstStartCycles, ExecCycles: c.DMAExecCycles, WaitCycles: c.DMAWaitCycles, Bytes: c.Bytes})
	}
}

// AddTrace adds the trace-level facts of one decoded and joined trace.
func (a *Aggregator) AddTrace(st Stats, js JoinStats, devices []Device, w []Warning) {
	for _, d := range a.devs {
		d.endTrace()
	}
	s := &a.summary
	s.Events += st.Events
	s.Bytes += st.Bytes
	if s.Version == 0 {
		s.Version = js.Version
	}
	s.Truncated = s.Truncated || st.Truncated
	if js.Events > 0 {
		s.WindowNS += js.LastNS - js.StartNS
	}
	s.UnmatchedResponses += js.UnmatchedResponses
	s.IDWraps += js.IDWraps
	s.HostWaitNS += js.HostWaitNS
	s.Waits += js.Waits
	for _, d := range devices {
		if a.known == nil {
			a.known = map[int]bool{}
		}
		a.known[d.ID] = true
		if a.opts.Device < 0 || d.ID == a.opts.Device {
			a.dev(d.ID, d.FreqMHz)
		}
	}
	for _, x := range w {
		a.warnings.list = append(a.warnings.list, x)
	}
}

func percentileNS(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted) + 99) / 100
	if i < 1 {
		i = 1
	}
	return sorted[i-1]
}

func meanNS(sum int64, n int) int64 {
	if n == 0 {
		return 0
	}
	return sum / int64(n)
}

func sortedNS(v []int64) []int64 {
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func sumNS(v []int64) int64 {
	var t int64
	for _, x := range v {
		t += x
	}
	return t
}

// gapBounds are the histogram bucket lower bounds, device cycles.
var gapBounds = []uint64{0, 1000, 10000, 100000, 1000000}

// Finish computes the report.
func (a *Aggregator) Finish() *Report {
	r := &Report{Summary: a.summary}
	if a.opts.want(ViewKernels) {
		r.Kernels = []KernelRow{}
	}
	if a.opts.want(ViewMemcpy) {
		r.Memcpy = []CopyRow{}
	}
	if a.opts.want(ViewGaps) {
		r.Gaps = []DeviceGaps{}
	}
	if a.opts.want(ViewStreams) {
		r.Streams = []StreamCommands{}
	}
	if a.opts.want(ViewSlowest) {
		r.Slowest = []SlowLaunch{}
	}
	s := &r.Summary
	// Kernels.
	var totalExec int64
	var totalCycles uint64
	for _, k := range a.kernels {
		totalExec += k.row.TotalExecNS
		totalCycles = satAdd(totalCycles, k.row.TotalExecCycles)
	}
	for _, k := range a.kernels {
		row := k.row
		s.Launches += row.Launches
		s.IncompleteLaunches += row.Incomplete
		ex := sortedNS(k.exec)
		if len(ex) > 0 {
			row.MinExecNS, row.MaxExecNS = ex[0], ex[len(ex)-1]
			row.MeanExecNS = meanNS(row.TotalExecNS, len(ex))
			row.P50ExecNS, row.P95ExecNS = percentileNS(ex, 50), percentileNS(ex, 95)
		}
		row.MeanWaitNS = meanNS(row.TotalWaitNS, k.waitN)
		switch {
		case totalExec > 0:
			row.ExecPercent = float64(row.TotalExecNS) * 100 / float64(totalExec)
		case totalCycles > 0:
			// No frequency: the share of device cycles.
			row.ExecPercent = float64(row.TotalExecCycles) * 100 / float64(totalCycles)
		}
		api := sortedNS(k.api)
		row.MeanLaunchAPINS, row.P95LaunchAPINS = meanNS(sumNS(api), len(api)), percentileNS(api, 95)
		row.MeanSubmitDelayNS = meanNS(k.subSum, k.subN)
		e2e := sortedNS(k.e2e)
		row.MeanEndToEndNS, row.P95EndToEndNS = meanNS(sumNS(e2e), len(e2e)), percentileNS(e2e, 95)
		sort.Ints(row.KernelIDs)
		if row.KernelIDs == nil {
			row.KernelIDs = []int{}
		}
		if a.opts.KeepSamples {
			row.Samples = k.exec
		}
		if a.opts.want(ViewKernels) || a.opts.KeepSamples {
			r.Kernels = append(r.Kernels, row)
		}
	}
	sort.Slice(r.Kernels, func(i, j int) bool {
		a, b := r.Kernels[i], r.Kernels[j]
		if a.TotalExecNS != b.TotalExecNS {
			return a.TotalExecNS > b.TotalExecNS
		}
		if a.TotalExecCycles != b.TotalExecCycles {
			return a.TotalExecCycles > b.TotalExecCycles
		}
		return a.Name < b.Name
	})
	s.KernelNames = len(a.kernels)
	_, uber := a.kernels["uberkernel"]
	s.UberkernelOnly = len(a.kernels) == 1 && uber
	if s.UberkernelOnly {
		a.warnings.Add("uberkernel", -1, -1, "the only kernel is uberkernel: per-op attribution is unavailable from this trace (run without GGML_ET_UBERKERNEL for per-op rows)")
	}
	// Copies.
	for i := range a.copies {
		c := a.copies[i]
		s.Copies += c.Count
		s.IncompleteCopies += c.Incomplete
		if c.sizedExecNS > 0 {
			c.DeviceBytesPerSec = float64(c.Bytes) * 1e9 / float64(c.sizedExecNS)
		}
		if c.EndToEndNS > 0 {
			c.EndToEndBytesPerSec = float64(c.e2eBytes) * 1e9 / float64(c.EndToEndNS)
		}
		if c.Count > 0 && a.opts.want(ViewMemcpy) {
			r.Memcpy = append(r.Memcpy, c)
		}
	}
	// Devices.
	if a.opts.Device >= 0 && !a.known[a.opts.Device] {
		var have []string
		for id := range a.known {
			have = append(have, strconv.Itoa(id))
		}
		sort.Strings(have)
		list := "none"
		if len(have) > 0 {
			list = strings.Join(have, ", ")
		}
		a.warnings.Add("no-such-device", -1, -1, "--device %d: the trace has no device %d (its devices: %s); nothing is selected", a.opts.Device, a.opts.Device, list)
	}
	ids := make([]int, 0, len(a.devs))
	for id := range a.devs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		d := a.devs[id]
		ds := DeviceSummary{ID: id, FreqMHz: d.freq, Launches: d.launches, BusyPercent: -1, ExecCycles: d.exec}
		if d.freq == 0 && d.launches > 0 {
			a.warnings.Add("no_frequency", -1, -1, "device %d: the trace gives no usable frequency: its device times are unknown, so kernel times are shown in cycles; give --freq-mhz MHZ to convert them", id)
		}
		if span := d.span(); span > 0 {
			ds.SpanCycles = span
			ds.BusyPercent = float64(d.exec) * 100 / float64(ds.SpanCycles)
		}
		s.Devices = append(s.Devices, ds)
		if a.opts.want(ViewGaps) && (d.everSeen || len(d.intervals) > 0) {
			r.Gaps = append(r.Gaps, a.gaps(id, d))
		}
	}
	if s.Devices == nil {
		s.Devices = []DeviceSummary{}
	}
	// Streams.
	if a.opts.want(ViewStreams) {
		for _, sc := range a.streams {
			sort.SliceStable(sc.Commands, func(i, j int) bool {
				x, y := sc.Commands[i], sc.Commands[j]
				if x.SubmitNS != y.SubmitNS {
					return x.SubmitNS < y.SubmitNS
				}
				return x.DispatchCycles < y.DispatchCycles
			})
			r.Streams = append(r.Streams, *sc)
		}
		sort.Slice(r.Streams, func(i, j int) bool {
			if r.Streams[i].Device != r.Streams[j].Device {
				return r.Streams[i].Device < r.Streams[j].Device
			}
			return r.Streams[i].Stream < r.Streams[j].Stream
		})
	}
	if a.opts.want(ViewSlowest) {
		r.Slowest = append([]SlowLaunch(nil), a.slow...)
		sort.Slice(r.Slowest, func(i, j int) bool {
			x, y := r.Slowest[i], r.Slowest[j]
			if x.ExecCycles != y.ExecCycles {
				return x.ExecCycles > y.ExecCycles
			}
			return x.LaunchNS < y.LaunchNS
		})
	}
	r.Warnings = a.warnings.List()
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	s.Warnings = len(r.Warnings)
	return r
}

func (a *Aggregator) gaps(id int, d *devAgg) DeviceGaps {
	g := DeviceGaps{Device: id, FreqMHz: d.freq, Kernels: len(d.intervals)}
	for i, lo := range gapBounds {
		b := GapBucket{MinCycles: lo}
		if i+1 < len(gapBounds) {
			b.MaxCycles = gapBounds[i+1]
		}
		g.Histogram = append(g.Histogram, b)
	}
	iv := d.intervals
	sort.Slice(iv, func(i, j int) bool {
		if iv[i].start != iv[j].start {
			return iv[i].start < iv[j].start
		}
		return iv[i].end < iv[j].end
	})
	var top []Gap
	var end uint64
	var prev interval
	for i, x := range iv {
		if i > 0 {
			if x.start < end {
				g.Overlaps++
			} else {
				gap := x.start - end
				g.Gaps++
				g.TotalGapCycles += gap
				for b := len(gapBounds) - 1; b >= 0; b-- {
					if gap >= gapBounds[b] {
						g.Histogram[b].Count++
						g.Histogram[b].TotalCycles += gap
						break
					}
				}
				top = append(top, Gap{Cycles: gap, NS: CyclesToNS(gap, d.freq), AtCycles: end,
					Before: a.names[prev.name], After: a.names[x.name], BeforeEventID: prev.id, AfterEventID: x.id})
				if len(top) > 4*a.opts.Top+64 {
					top = trimGaps(top, a.opts.Top)
				}
			}
		}
		if i == 0 || x.end > end {
			end = x.end
			prev = x
		}
	}
	g.Top = trimGaps(top, a.opts.Top)
	if g.Top == nil {
		g.Top = []Gap{}
	}
	return g
}

func trimGaps(top []Gap, n int) []Gap {
	sort.SliceStable(top, func(i, j int) bool {
		if top[i].Cycles != top[j].Cycles {
			return top[i].Cycles > top[j].Cycles
		}
		return top[i].AtCycles < top[j].AtCycles
	})
	if len(top) > n {
		top = top[:n]
	}
	return top
}

// Input is one trace to report on.
type Input struct {
	// File names the trace in messages.
	File string
	R    io.Reader
}

// BuildReport decodes, validates and joins the traces and aggregates them
// into one report (merged). Warnings of all stages are in Report.Warnings.
// Errors are input errors (*SyntaxError) or read errors.
func BuildReport(inputs []Input, opts ReportOptions) (*Report, error) {
	agg := NewAggregator(opts)
	for _, in := range inputs {
		if err := agg.Feed(in, opts); err != nil {
			return nil, err
		}
	}
	return agg.Finish(), nil
}

// Feed decodes, validates and joins one trace into the aggregator.
func (a *Aggregator) Feed(in Input, opts ReportOptions) error {
	var w Warnings
	v := NewValidator(in.File, &w)
	j := NewJoiner(JoinOptions{Kernels: opts.Kernels, FreqMHz: opts.FreqMHz, OverrideFreq: opts.OverrideFreq, Warnings: &w,
		OnLaunch: a.AddLaunch, OnCopy: a.AddCopy})
	started := false
	st, err := Decode(in.R, Options{File: in.File, Warnings: &w}, func(e Event) error {
		v.Check(&e)
		if !started && e.Class == ClassStartProfiling {
			started = true
			a.SetStart(e.TimeNS)
		} else if !started && e.Index == 0 && e.Has&HasTime != 0 {
			a.SetStart(e.TimeNS)
		}
		j.Add(&e)
		return nil
	})
	if err != nil {
		return err
	}
	v.Finish(st)
	js := j.Flush()
	a.AddTrace(st, js, j.Devices(), w.List())
	return nil
}

// satAdd adds without wrapping: a sum of cycle counts saturates at 2^64−1.
func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<64 - 1
}

// satAddNS adds non-negative durations without wrapping.
func satAddNS(a, b int64) int64 {
	if s := a + b; s >= a || b < 0 {
		return s
	}
	return 1<<63 - 1
}

package profile

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/ainekko/et/internal/kernelmap"
)

// This file turns a runtime trace into Chrome Trace Event JSON for
// ui.perfetto.dev and chrome://tracing (reference §5.5):
//
//   - pid 1 is the host: one track per host thread (named from
//     IdentifyThread or the joiner's synthetic labels), Complete events as
//     "X" slices, Instant events as "i", MemoryStats as "C" counters
//     "device N memory".
//   - pid 100+N is device N: one track per engine (compute, DMA H2D, DMA
//     D2H, DMA P2P), spread over extra lanes where spans overlap, because
//     slices on one track must nest.
//   - flow arrows (flow format v2: bind_id + flow_out/flow_in on the
//     slices themselves) link each KernelLaunch (or memcpy API call) to its
//     device span and on to its DispatchEvent.
//   - device spans sit at host-aligned times when the sandwich of
//     reference §2.1 gives a consistent clock offset; otherwise they are
//     on device time starting at 0, and the process name says so.
//
// The export reads the trace twice: the first pass joins launches and
// copies (memory grows with the number of device commands, not with the
// number of events) and fits the clock offsets; the second streams the
// host events straight to the output.

// EventSource replays a trace's events in file order, calling fn for each
// one; it returns fn's first error or a decoding error. ExportChrome calls
// it twice, so it must start from the beginning each time.
type EventSource func(fn func(*Event) error) error

// ChromeOptions configure ExportChrome.
type ChromeOptions struct {
	// Kernels names kernel ids; nil means "kernel#<id>".
	Kernels *kernelmap.Map
	// FreqMHz and OverrideFreq are as in JoinOptions.
	FreqMHz      uint32
	OverrideFreq bool
	// DeviceTime puts every device on device time, even when it could be
	// aligned with the host clock.
	DeviceTime bool
	// Source is recorded in the document's otherData (a file name).
	Source string
	// Warnings collects warnings from joining and exporting.
	Warnings *Warnings
}

// ChromeDevice says how one device's tracks were placed.
type ChromeDevice struct {
	ID int `json:"id"`
	// FreqMHz is the frequency used to convert cycles, 0 if unknown.
	FreqMHz uint32 `json:"frequency_mhz"`
	// Aligned is true when device spans are on the host clock; OffsetNS
	// is then host_ns − device_ns.
	Aligned  bool  `json:"aligned"`
	OffsetNS int64 `json:"offset_ns"`
	// Note explains why the device is not aligned (empty when aligned).
	Note string `json:"note,omitempty"`
	// Spans counts the device spans written; Lanes the compute tracks
	// needed to keep overlapping spans apart.
	Spans int `json:"spans"`
	Lanes int `json:"compute_lanes"`
}

// ChromeStats summarise an export.
type ChromeStats struct {
	// Events is the number of trace events written (all phases).
	Events      int            `json:"events"`
	HostEvents  int            `json:"host_events"`
	DeviceSpans int            `json:"device_spans"`
	Flows       int            `json:"flows"`
	Counters    int            `json:"counters"`
	Devices     []ChromeDevice `json:"devices"`
	Join        JoinStats      `json:"join"`
}

// Device engines, one track group each.
const (
	engCompute = iota
	engH2D
	engD2H
	engP2P
	numEngines
)

var engineNames = [numEngines]string{"compute", "DMA H2D", "DMA D2H", "DMA P2P"}

const (
	hostPID       = 1
	devicePIDBase = 100
	// laneTIDStride separates the tids of the engines of one device.
	laneTIDStride = 1000
)

// flowKey identifies the host event a flow starts or ends on: its event
// id and time stamp (ids alone wrap).
type flowKey struct {
	id uint16
	ts int64
}

// devSpan is one device command (a kernel) or one copy's group of DMA
// commands, kept between the two passes.
type devSpan struct {
	seq      int
	dev      int
	engine   uint8
	lane     int
	copyDir  Direction
	isCopy   bool
	name     string
	kernelID int
	event    uint16
	stream   int
	freq     uint32
	// startCyc..endCyc is the span on the device clock (dispatch to end).
	startCyc, endCyc uint64
	waitCyc, execCyc uint64
	bytes            uint64
	sizeKnown        bool
	commands         int
	// flow: which host ends exist.
	hasAPI, hasDisp bool
	// alignment sandwich on the host clock (0 = unknown).
	submitNS, doneNS int64
	// bounds are the cycles the submit and done bounds refer to.
	submitCyc uint64
}

// ExportChrome writes the Chrome Trace Event JSON of the trace replayed by
// src to w. A decoding error from src (a malformed trace) is returned as
// is; the output is then incomplete and the caller should discard it.
func ExportChrome(w io.Writer, src EventSource, o ChromeOptions) (ChromeStats, error) {
	var st ChromeStats
	var spans []devSpan
	apiFlow := map[flowKey]int{}  // host API event → span index
	dispFlow := map[flowKey]int{} // DispatchEvent → span index

	addSpan := func(s devSpan) { spans = append(spans, s) }
	j := NewJoiner(JoinOptions{
		Kernels: o.Kernels, FreqMHz: o.FreqMHz, OverrideFreq: o.OverrideFreq, Warnings: o.Warnings,
		OnLaunch: func(l *Launch) {
			if l.Status&SeenResponse == 0 {
				return // never reached the device (or its response was lost)
			}
			s := devSpan{
				seq: l.Seq, dev: l.Device, engine: engCompute, name: l.Kernel, kernelID: l.KernelID,
				event: l.EventID, stream: l.Stream, freq: l.FreqMHz,
				startCyc: l.DispatchCycles(), endCyc: l.EndCycles(), waitCyc: l.WaitCycles, execCyc: l.ExecCycles,
				commands: 1, submitCyc: l.StartCycles,
			}
			if l.Status&SeenCommand != 0 {
				s.submitNS = l.SubmitNS
			}
			s.doneNS = l.ResponseNS
			if l.Status&SeenAPI != 0 {
				s.hasAPI = true
				apiFlow[flowKey{l.EventID, l.LaunchNS}] = len(spans)
			}
			if l.Status&SeenDispatch != 0 {
				s.hasDisp = true
				dispFlow[flowKey{l.EventID, l.DispatchNS}] = len(spans)
			}
			addSpan(s)
		},
		OnCopy: func(c *Copy) {
			if c.Responses == 0 {
				return
			}
			s := devSpan{
				seq: c.Seq, dev: c.Device, isCopy: true, copyDir: c.Direction, event: c.EventID, stream: c.Stream,
				freq: c.FreqMHz, startCyc: c.FirstStartCycles, endCyc: c.LastEndCycles,
				waitCyc: c.DMAWaitCycles, execCyc: c.DMAExecCycles, bytes: c.Bytes, sizeKnown: c.SizeKnown,
				commands: c.Commands, submitCyc: c.FirstStartCycles,
			}
			switch c.RspType {
			case RspDMARead:
				s.engine = engD2H
			case RspDMAP2P:
				s.engine = engP2P
			default:
				s.engine = engH2D
			}
			s.name = c.Direction.String() + " copy"
			if c.Direction == Internal {
				s.name = "internal copy"
			}
			if c.Status&SeenCommand != 0 {
				s.submitNS = c.SubmitNS
			}
			if c.Status&SeenDispatch != 0 {
				s.doneNS = c.DispatchNS
				s.hasDisp = true
				dispFlow[flowKey{c.EventID, c.DispatchNS}] = len(spans)
			}
			if c.Status&SeenAPI != 0 {
				s.hasAPI = true
				apiFlow[flowKey{c.EventID, c.APINS}] = len(spans)
			}
			addSpan(s)
		},
	})

	// Pass 1: join.
	if err := src(func(e *Event) error { j.Add(e); return nil }); err != nil {
		return st, err
	}
	st.Join = j.Flush()
	threads := j.Threads()
	devices := j.Devices()
	t0 := st.Join.FirstNS

	// Place the device spans: clock offsets, then lanes.
	place := placeDevices(spans, devices, o.DeviceTime)
	// hostNS returns a span's start and end on the output clock (ns from
	// t0 for aligned devices, from the device's first dispatch otherwise).
	spanTimes := func(s *devSpan) (int64, int64) {
		p := place[s.dev]
		if p.aligned {
			return CyclesToNS(s.startCyc, s.freq) + p.offset - t0, CyclesToNS(s.endCyc, s.freq) + p.offset - t0
		}
		a, b := s.startCyc-p.originCyc, s.endCyc-p.originCyc
		if s.freq == 0 {
			return int64(a), int64(b) // cycles shown as ns
		}
		return CyclesToNS(a, s.freq), CyclesToNS(b, s.freq)
	}
	lanes := assignLanes(spans)

	// A flow exists when a span has at least one host end.
	flowID := func(i int) uint64 { return uint64(spans[i].seq) }

	cw := newChromeWriter(w)
	other := []chromeArg{{"generator", "et profile export"}, {"format", "et_runtime_trace.json"}}
	if o.Source != "" {
		other = append(other, chromeArg{"trace", o.Source})
	}
	other = append(other, chromeArg{"origin_host_ns", t0})
	cw.begin(other)

	// Metadata: host process and threads.
	tids := make(map[uint64]int, len(threads))
	cw.event(&chromeEvent{Name: "process_name", Ph: "M", PID: hostPID, Args: []chromeArg{{"name", "Host (ET runtime)"}}})
	cw.event(&chromeEvent{Name: "process_sort_index", Ph: "M", PID: hostPID, Args: []chromeArg{{"sort_index", 0}}})
	for i, th := range threads {
		tid := i + 1
		tids[th.ID] = tid
		cw.event(&chromeEvent{Name: "thread_name", Ph: "M", PID: hostPID, TID: tid, Args: []chromeArg{{"name", th.Name}}})
		cw.event(&chromeEvent{Name: "thread_sort_index", Ph: "M", PID: hostPID, TID: tid, Args: []chromeArg{{"sort_index", tid}}})
	}

	// Pass 2: host events, streamed.
	err := src(func(e *Event) error {
		if e.Has&HasTime == 0 {
			return nil
		}
		tid, ok := tids[e.Thread]
		if !ok {
			tid = 0
		}
		ev := chromeEvent{Name: e.Class, Cat: "host", PID: hostPID, TID: tid, TSNS: e.TimeNS - t0}
		switch {
		case e.Class == ClassIdentifyThread:
			return nil // becomes the thread_name metadata
		case e.Type == TypeComplete:
			ev.Ph = "X"
			if e.Has&HasDuration != 0 && e.DurationNS > 0 {
				ev.DurNS = e.DurationNS
			}
		case e.Type == TypeCounter && e.Has&(HasMemAllocated|HasMemFree|HasMemMaxContig) != 0:
			dev := "?"
			if e.Has&HasDevice != 0 {
				dev = strconv.Itoa(e.Device)
			}
			ev.Name, ev.Ph, ev.Cat = "device "+dev+" memory", "C", "memory"
			if e.Has&HasMemAllocated != 0 {
				ev.Args = append(ev.Args, chromeArg{"allocated", e.MemAllocatedBytes})
			}
			if e.Has&HasMemFree != 0 {
				ev.Args = append(ev.Args, chromeArg{"free", e.MemFreeBytes})
			}
			if e.Has&HasMemMaxContig != 0 {
				ev.Args = append(ev.Args, chromeArg{"max_contiguous_free", e.MemMaxContigBytes})
			}
			cw.event(&ev)
			st.Counters++
			return nil
		default:
			// Instant, legacy Start/End, unknown types: instants, so
			// that nothing can break the nesting of a thread's slices.
			ev.Ph, ev.Scope = "i", "t"
			if e.Type != TypeInstant {
				ev.Name = e.Class + " (" + e.Type + ")"
			}
		}
		ev.Args = hostArgs(e, o.Kernels)
		if e.Has&HasID != 0 {
			k := flowKey{e.ID, e.TimeNS}
			if i, ok := apiFlow[k]; ok && e.Type == TypeComplete && isAPIClass(e.Class) {
				ev.BindID, ev.FlowOut = flowID(i), true
				st.Flows++
			} else if i, ok := dispFlow[k]; ok && e.Class == ClassDispatchEvent {
				// Perfetto binds flows only to slices: a zero-length
				// slice stands in for the instant.
				ev.Ph, ev.Scope, ev.DurNS = "X", "", 0
				ev.BindID, ev.FlowIn = flowID(i), true
			}
		}
		cw.event(&ev)
		st.HostEvents++
		return nil
	})
	if err != nil {
		return st, err
	}

	// Device processes, tracks and spans.
	for _, d := range sortedDeviceIDs(place) {
		p := place[d]
		pid := devicePIDBase + d
		if d < 0 {
			pid = devicePIDBase - 1
		}
		cw.event(&chromeEvent{Name: "process_name", Ph: "M", PID: pid, Args: []chromeArg{{"name", deviceProcessName(d, p)}}})
		cw.event(&chromeEvent{Name: "process_sort_index", Ph: "M", PID: pid, Args: []chromeArg{{"sort_index", pid}}})
		for eng := 0; eng < numEngines; eng++ {
			for lane := 0; lane < lanes[laneKey{d, uint8(eng)}]; lane++ {
				tid := eng*laneTIDStride + lane + 1
				name := engineNames[eng]
				if lane > 0 {
					name += " #" + strconv.Itoa(lane+1)
				}
				cw.event(&chromeEvent{Name: "thread_name", Ph: "M", PID: pid, TID: tid, Args: []chromeArg{{"name", name}}})
				cw.event(&chromeEvent{Name: "thread_sort_index", Ph: "M", PID: pid, TID: tid, Args: []chromeArg{{"sort_index", tid}}})
			}
		}
	}
	devStats := map[int]*ChromeDevice{}
	for _, d := range sortedDeviceIDs(place) {
		p := place[d]
		devStats[d] = &ChromeDevice{ID: d, FreqMHz: p.freq, Aligned: p.aligned, OffsetNS: p.offset, Note: p.note}
	}
	for i := range spans {
		s := &spans[i]
		start, end := spanTimes(s)
		if start < 0 {
			start = 0
		}
		dur := end - start
		if dur < 0 {
			dur = 0
		}
		pid := devicePIDBase + s.dev
		if s.dev < 0 {
			pid = devicePIDBase - 1
		}
		ev := chromeEvent{
			Name: s.name, Cat: "device", Ph: "X", PID: pid, TID: int(s.engine)*laneTIDStride + s.lane + 1,
			TSNS: start, DurNS: dur, Args: spanArgs(s),
		}
		if s.hasAPI || s.hasDisp {
			ev.BindID = flowID(i)
			ev.FlowIn = s.hasAPI
			ev.FlowOut = s.hasDisp
			if !s.hasAPI {
				st.Flows++ // the flow starts here
			}
		}
		cw.event(&ev)
		st.DeviceSpans++
		ds := devStats[s.dev]
		ds.Spans++
	}
	for _, d := range sortedDeviceIDs(place) {
		ds := devStats[d]
		ds.Lanes = lanes[laneKey{d, engCompute}]
		st.Devices = append(st.Devices, *ds)
	}
	st.Events = cw.n
	return st, cw.end()
}

func isAPIClass(c string) bool {
	switch c {
	case ClassKernelLaunch, ClassMemcpyHostToDevice, ClassMemcpyDeviceToHost, ClassMemcpyDeviceToDevice:
		return true
	}
	return false
}

// hostArgs are the args of a host event: its extras, addresses as hex
// strings (JSON viewers read numbers as doubles, which would round them).
func hostArgs(e *Event, km *kernelmap.Map) []chromeArg {
	var a []chromeArg
	h := e.Has
	if h&HasID != 0 {
		a = append(a, chromeArg{"event", e.ID})
	}
	if h&HasParentID != 0 {
		a = append(a, chromeArg{"parent_id", e.ParentID})
	}
	if h&HasStream != 0 {
		a = append(a, chromeArg{"stream", e.Stream})
	}
	if h&HasDevice != 0 {
		a = append(a, chromeArg{"device_id", e.Device})
	}
	if h&HasKernelID != 0 {
		a = append(a, chromeArg{"kernel_id", e.KernelID}, chromeArg{"kernel", km.Label(e.KernelID)})
	}
	if h&HasRspType != 0 {
		a = append(a, chromeArg{"rsp_type", e.RspType.String()})
	}
	if h&HasDuration != 0 {
		a = append(a, chromeArg{"duration_ns", e.DurationNS})
	}
	if h&HasDevStart != 0 {
		a = append(a, chromeArg{"device_cmd_start_cycles", e.DevStartCycles})
	}
	if h&HasDevWait != 0 {
		a = append(a, chromeArg{"device_cmd_wait_cycles", e.DevWaitCycles})
	}
	if h&HasDevExec != 0 {
		a = append(a, chromeArg{"device_cmd_exec_cycles", e.DevExecCycles})
	}
	if h&HasSize != 0 {
		a = append(a, chromeArg{"size_bytes", e.SizeBytes})
	}
	if h&HasPtr != 0 {
		a = append(a, chromeArg{"ptr", hexAddr(e.Ptr)})
	}
	if h&HasSrcPtr != 0 {
		a = append(a, chromeArg{"src_ptr", hexAddr(e.SrcPtr)})
	}
	if h&HasDstPtr != 0 {
		a = append(a, chromeArg{"dst_ptr", hexAddr(e.DstPtr)})
	}
	if h&HasLoadAddress != 0 {
		a = append(a, chromeArg{"load_address", hexAddr(e.LoadAddress)})
	}
	if h&HasBarrier != 0 {
		a = append(a, chromeArg{"barrier", e.Barrier})
	}
	if h&HasVersion != 0 {
		a = append(a, chromeArg{"version", e.Version})
	}
	if h&HasProps != 0 && e.Props != nil {
		a = append(a, chromeArg{"frequency_mhz", e.Props.FrequencyMHz})
	}
	a = append(a, chromeArg{"trace_event", e.Index})
	return a
}

func hexAddr(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func spanArgs(s *devSpan) []chromeArg {
	var a []chromeArg
	if s.isCopy {
		a = append(a, chromeArg{"direction", s.copyDir.String()})
		if s.sizeKnown {
			a = append(a, chromeArg{"size_bytes", s.bytes})
		}
		a = append(a, chromeArg{"dma_commands", s.commands})
	} else {
		a = append(a, chromeArg{"kernel", s.name}, chromeArg{"kernel_id", s.kernelID})
	}
	a = append(a,
		chromeArg{"event", s.event},
		chromeArg{"stream", s.stream},
		chromeArg{"exec_cycles", s.execCyc},
		chromeArg{"wait_cycles", s.waitCyc},
		chromeArg{"dispatch_cycles", s.startCyc},
		chromeArg{"frequency_mhz", s.freq},
	)
	if s.freq != 0 {
		a = append(a, chromeArg{"exec_ns", CyclesToNS(s.execCyc, s.freq)})
	}
	return a
}

// devicePlace is how one device's spans are put on the output clock.
type devicePlace struct {
	freq      uint32
	aligned   bool
	offset    int64  // host_ns = device_ns + offset, when aligned
	originCyc uint64 // first dispatch, when not aligned
	note      string
}

// placeDevices fits, per device, the offset between device time and host
// time from the sandwich of reference §2.1: every command satisfies
// CommandSent.ts − dev_ns(start) ≤ offset ≤ completion.ts − dev_ns(end).
// The upper bound (the smallest observed completion latency) is used when
// the interval is not empty; otherwise, or when the frequency is unknown,
// the device stays on device time.
func placeDevices(spans []devSpan, devices []Device, forceDevice bool) map[int]devicePlace {
	type acc struct {
		lo, hi         int64
		haveLo, haveHi bool
		origin         uint64
		haveOrigin     bool
		freq           uint32
		mixedFreq      bool
	}
	accs := map[int]*acc{}
	for i := range spans {
		s := &spans[i]
		a := accs[s.dev]
		if a == nil {
			a = &acc{freq: s.freq}
			accs[s.dev] = a
		}
		if s.freq != a.freq {
			a.mixedFreq = true
		}
		if !a.haveOrigin || s.startCyc < a.origin {
			a.origin, a.haveOrigin = s.startCyc, true
		}
		if s.freq == 0 {
			continue
		}
		if s.submitNS != 0 {
			v := s.submitNS - CyclesToNS(s.submitCyc, s.freq)
			if !a.haveLo || v > a.lo {
				a.lo, a.haveLo = v, true
			}
		}
		if s.doneNS != 0 {
			v := s.doneNS - CyclesToNS(s.endCyc, s.freq)
			if !a.haveHi || v < a.hi {
				a.hi, a.haveHi = v, true
			}
		}
	}
	out := map[int]devicePlace{}
	for d, a := range accs {
		p := devicePlace{freq: a.freq, originCyc: a.origin}
		switch {
		case forceDevice:
			p.note = "device time requested"
		case a.freq == 0:
			p.note = "device frequency unknown: cycles shown as ns"
		case a.mixedFreq:
			p.note = "several frequencies for one device"
		case !a.haveHi:
			p.note = "no completion times to align with"
		case a.haveLo && a.lo > a.hi:
			p.note = fmt.Sprintf("host and device clocks disagree by %d ns (wrong frequency or simulated cycles)", a.lo-a.hi)
		default:
			p.aligned, p.offset = true, a.hi
		}
		out[d] = p
	}
	for _, d := range devices {
		if _, ok := out[d.ID]; !ok {
			out[d.ID] = devicePlace{freq: d.FreqMHz, note: "no device commands"}
		}
	}
	return out
}

func deviceProcessName(d int, p devicePlace) string {
	name := "Device " + strconv.Itoa(d)
	if d < 0 {
		name = "Device ?"
	}
	if p.aligned {
		return name + " (aligned to host time)"
	}
	return name + " (device time, not aligned to host: " + p.note + ")"
}

func sortedDeviceIDs(m map[int]devicePlace) []int {
	ids := make([]int, 0, len(m))
	for d := range m {
		ids = append(ids, d)
	}
	sort.Ints(ids)
	return ids
}

type laneKey struct {
	dev    int
	engine uint8
}

// assignLanes spreads the spans of each (device, engine) over lanes so
// that spans on one lane never overlap (slices on one track must nest):
// each span, in start order, takes the first lane that is free by then.
// It sets spans[i].lane and returns the number of lanes per track.
func assignLanes(spans []devSpan) map[laneKey]int {
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := &spans[order[a]], &spans[order[b]]
		if sa.startCyc != sb.startCyc {
			return sa.startCyc < sb.startCyc
		}
		return sa.seq < sb.seq
	})
	ends := map[laneKey][]uint64{}
	for _, i := range order {
		s := &spans[i]
		k := laneKey{s.dev, s.engine}
		lanes := ends[k]
		lane := -1
		for l, end := range lanes {
			if end <= s.startCyc {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(lanes)
			lanes = append(lanes, 0)
		}
		lanes[lane] = s.endCyc
		ends[k] = lanes
		s.lane = lane
	}
	out := make(map[laneKey]int, len(ends))
	for k, v := range ends {
		out[k] = len(v)
	}
	return out
}

// SeekerSource returns an EventSource that decodes r from its start on
// every call. Warnings go to o.Warnings on the first pass only, and the
// decoding statistics of the first pass are stored in *st (if st is not
// nil).
func SeekerSource(r io.ReadSeeker, o Options, st *Stats) EventSource {
	passes := 0
	return func(fn func(*Event) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("rewind trace: %w", err)
		}
		opts := o
		if passes > 0 {
			opts.Warnings = nil
		}
		passes++
		s, err := Decode(r, opts, func(e Event) error { return fn(&e) })
		if passes == 1 && st != nil {
			*st = s
		}
		return err
	}
}

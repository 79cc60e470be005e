package profile

import (
	"sort"
	"strconv"
	"strings"
)

// deferWindow is how many events a finished-looking group waits for a
// late API event (recorded at scope exit, so often after its commands)
// before it is emitted without one.
const deferWindow = 4096

// JoinStats summarise a join.
type JoinStats struct {
	// StartNS is the StartProfiling time stamp (else the first event's).
	StartNS int64 `json:"start_ns"`
	// FirstNS and LastNS bound all event time stamps (LastNS includes
	// Complete durations).
	FirstNS int64 `json:"first_ns"`
	LastNS  int64 `json:"last_ns"`
	// EndNS is the EndProfiling time stamp, 0 if absent.
	EndNS   int64 `json:"end_ns"`
	Version int   `json:"version"`
	Events  int   `json:"events"`

	Launches int `json:"launches"`
	Copies   int `json:"copies"`
	// IncompleteLaunches lack a response or a dispatch (a crashed run);
	// LaunchesWithoutAPI were seen only from the device side.
	IncompleteLaunches int `json:"incomplete_launches"`
	LaunchesWithoutAPI int `json:"launches_without_api"`
	IncompleteCopies   int `json:"incomplete_copies"`
	// UnmatchedResponses have no CommandSent and no API event.
	UnmatchedResponses int `json:"unmatched_responses"`
	// IDWraps counts event-id wraps past 65535.
	IDWraps int `json:"id_wraps"`
	// HostWaitNS sums WaitForEvent and WaitForStream durations; Waits
	// counts them.
	HostWaitNS int64 `json:"host_wait_ns"`
	Waits      int   `json:"waits"`
}

type slot struct {
	gen int

	// As an API event (KernelLaunch, Memcpy*, LoadCode).
	apiClass  string
	apiTS     int64
	apiDur    int64
	apiStream int
	apiDevice int
	kernelID  int
	size      uint64
	sizeKnown bool
	barrier   bool

	// As a command.
	hasCmd    bool
	cmdTS     int64
	cmdParent uint16
	cmdStream int
	cmdDevice int

	// As a response.
	hasRsp    bool
	rspTS     int64
	rspType   RspType
	rspThread uint64
	start     uint64
	wait      uint64
	exec      uint64
	linked    bool // response added to the parent's aggregate

	hasDisp bool
	dispTS  int64

	// As a parent of DMA commands and CMA copies.
	childCmds    int
	childRsps    int
	dmaExec      uint64
	dmaWait      uint64
	firstStart   uint64
	lastEnd      uint64
	childRspType RspType
	childRspSet  bool
	childDevice  int
	childStream  int
	firstSubmit  int64
	cmaN         int
	cmaNS        int64

	deferred bool
}

type deferred struct {
	id    uint16
	gen   int
	index int
}

type threadInfo struct {
	name      string
	named     bool
	events    int
	cma       int
	dispatch  int
	first     int
	isMain    bool
	receiverN int // device N from "Device N response receiver", -1
}

// Joiner turns a stream of events (in file order) into Launch and Copy
// records, following reference §5.1: every id join is "most recent
// earlier event with this id" (ids wrap at 65536), the stream and device
// of a response come from its CommandSent, memcpy DMA commands and CMA
// copies join their API event through parent_id, and device cycles are
// converted with each device's frequency.
//
// Memory is bounded: at most one pending group per event id.
type Joiner struct {
	opts JoinOptions
	// slots by event id, in pages of 256 allocated on first use: a
	// flat [65536]*slot costs 512 KiB per Joiner, which dominates small
	// traces (and fuzzing).
	slots [256]*[256]*slot
	live  int // non-nil slots
	free  []*slot
	queue []deferred
	qhead int
	gens  int
	seq   int
	index int

	stats       JoinStats
	haveStart   bool
	haveFirst   bool
	devices     map[int]*Device
	streamDev   map[int]int
	threads     map[uint64]*threadInfo
	threadOrder []uint64
	mainThread  uint64
	lastAPIID   int
	maxAPIID    int
}

// NewJoiner returns a joiner; records go to opts.OnLaunch and opts.OnCopy.
func NewJoiner(opts JoinOptions) *Joiner {
	return &Joiner{
		opts:      opts,
		devices:   map[int]*Device{},
		streamDev: map[int]int{},
		threads:   map[uint64]*threadInfo{},
		lastAPIID: -1,
	}
}

func (j *Joiner) slot(id uint16) *slot {
	if p := j.slots[id>>8]; p != nil {
		return p[id&255]
	}
	return nil
}

func (j *Joiner) setSlot(id uint16, s *slot) {
	p := j.slots[id>>8]
	if p == nil {
		if s == nil {
			return
		}
		p = new([256]*slot)
		j.slots[id>>8] = p
	}
	p[id&255] = s
}

func (j *Joiner) get(id uint16) *slot {
	s := j.slot(id)
	if s == nil {
		if n := len(j.free); n > 0 {
			s = j.free[n-1]
			j.free = j.free[:n-1]
			*s = slot{}
		} else {
			s = &slot{}
		}
		j.gens++
		s.gen = j.gens<<16 | int(id)
		s.apiStream, s.apiDevice, s.kernelID = -1, -1, -1
		s.cmdStream, s.cmdDevice = -1, -1
		s.childDevice, s.childStream = -1, -1
		j.setSlot(id, s)
		j.live++
	}
	return s
}

// release emits what the slot holds and frees it.
func (j *Joiner) release(id uint16) {
	s := j.slot(id)
	if s == nil {
		return
	}
	j.setSlot(id, nil)
	j.live--
	j.emit(id, s)
	j.free = append(j.free, s)
}

// Add feeds the next event in file order.
func (j *Joiner) Add(e *Event) {
	j.index = e.Index
	j.stats.Events++
	j.noteTime(e)
	j.noteThread(e)
	switch e.Class {
	case ClassStartProfiling:
		if !j.haveStart {
			j.haveStart = true
			j.stats.StartNS = e.TimeNS
			j.mainThread = e.Thread
		}
		if e.Has&HasVersion != 0 {
			j.stats.Version = e.Version
		}
	case ClassEndProfiling:
		j.stats.EndNS = e.TimeNS
	case ClassGetDeviceProperties:
		if e.Has&HasDevice != 0 {
			d := j.device(e.Device)
			if d.Props == nil && e.Props != nil {
				p := *e.Props
				d.Props = &p
			}
		}
	case ClassCreateStream:
		if e.Has&(HasStream|HasDevice) == HasStream|HasDevice {
			j.streamDev[e.Stream] = e.Device
			j.device(e.Device)
		}
	case ClassWaitForEvent, ClassWaitForStream:
		j.stats.Waits++
		j.stats.HostWaitNS += e.DurationNS
	case ClassKernelLaunch, ClassMemcpyHostToDevice, ClassMemcpyDeviceToHost, ClassMemcpyDeviceToDevice, ClassLoadCode:
		if e.Has&HasID != 0 {
			j.api(e)
		}
	case ClassCommandSent:
		if e.Has&HasID != 0 {
			j.command(e)
		}
	case ClassResponseReceived:
		if e.Has&HasID != 0 {
			j.response(e)
		}
	case ClassDispatchEvent:
		if e.Has&HasID != 0 {
			j.dispatch(e)
		}
	case ClassCmaCopy:
		if e.Has&(HasID|HasParentID) == HasID|HasParentID {
			p := j.parent(e.ParentID)
			p.cmaN++
			p.cmaNS += e.DurationNS
		}
	}
	j.drain(false)
}

func (j *Joiner) noteTime(e *Event) {
	if e.Has&HasTime == 0 {
		return
	}
	end := e.EndNS()
	if !j.haveFirst {
		j.haveFirst = true
		j.stats.FirstNS, j.stats.LastNS = e.TimeNS, end
		if !j.haveStart {
			j.stats.StartNS = e.TimeNS
		}
		return
	}
	if e.TimeNS < j.stats.FirstNS {
		j.stats.FirstNS = e.TimeNS
	}
	if end > j.stats.LastNS {
		j.stats.LastNS = end
	}
}

func (j *Joiner) noteThread(e *Event) {
	if e.Has&HasThread == 0 {
		return
	}
	t := j.threads[e.Thread]
	if t == nil {
		t = &threadInfo{first: e.Index, receiverN: -1}
		j.threads[e.Thread] = t
		j.threadOrder = append(j.threadOrder, e.Thread)
	}
	t.events++
	switch e.Class {
	case ClassIdentifyThread:
		if e.Has&HasThreadName != 0 && !t.named {
			t.name, t.named = e.ThreadName, true
			t.receiverN = receiverDevice(e.ThreadName)
		}
	case ClassCmaCopy:
		t.cma++
	case ClassDispatchEvent:
		t.dispatch++
	}
}

// receiverDevice parses N from "... Device N response receiver", or -1.
func receiverDevice(name string) int {
	i := strings.Index(name, "Device ")
	if i < 0 || !strings.HasSuffix(name, " response receiver") {
		return -1
	}
	rest := strings.TrimSuffix(name[i+len("Device "):], " response receiver")
	n, err := strconv.Atoi(rest)
	if err != nil {
		return -1
	}
	return n
}

func (j *Joiner) device(id int) *Device {
	d := j.devices[id]
	if d == nil {
		d = &Device{ID: id}
		j.devices[id] = d
	}
	return d
}

func (j *Joiner) freq(dev int) uint32 {
	if j.opts.OverrideFreq && j.opts.FreqMHz != 0 {
		return j.opts.FreqMHz
	}
	if d := j.devices[dev]; d != nil && d.Props != nil && d.Props.FrequencyMHz != 0 {
		return d.Props.FrequencyMHz
	}
	return j.opts.FreqMHz
}

func (j *Joiner) noteAPIID(id uint16) {
	v := int(id)
	if j.lastAPIID >= 0 && j.maxAPIID > 60000 && v < 8192 && j.lastAPIID > 57344 {
		j.stats.IDWraps++
		j.maxAPIID = v
	}
	if v > j.maxAPIID {
		j.maxAPIID = v
	}
	j.lastAPIID = v
}

func (j *Joiner) api(e *Event) {
	j.noteAPIID(e.ID)
	s := j.slot(e.ID)
	if s != nil && (s.apiClass != "" || (s.hasDisp && !s.deferred)) {
		j.release(e.ID)
	}
	s = j.get(e.ID)
	s.apiClass = e.Class
	s.apiTS, s.apiDur = e.TimeNS, e.DurationNS
	if e.Has&HasStream != 0 {
		s.apiStream = e.Stream
	}
	if e.Has&HasDevice != 0 {
		s.apiDevice = e.Device
	}
	if e.Has&HasKernelID != 0 {
		s.kernelID = e.KernelID
	}
	if e.Has&HasSize != 0 {
		s.size, s.sizeKnown = e.SizeBytes, true
	}
	s.barrier = e.Has&HasBarrier != 0 && e.Barrier
	j.try(e.ID, s)
}

// parent returns the group for parent id p, starting a new generation when
// the current one is already finished.
func (j *Joiner) parent(p uint16) *slot {
	s := j.slot(p)
	if s != nil && s.hasDisp && s.childRsps >= s.childCmds && s.apiClass != ClassKernelLaunch && !(s.hasCmd && !s.hasRsp) {
		j.release(p)
	}
	return j.get(p)
}

func (j *Joiner) command(e *Event) {
	if s := j.slot(e.ID); s != nil && (s.hasCmd || (s.hasDisp && s.apiClass == "")) {
		j.release(e.ID)
	}
	s := j.get(e.ID)
	s.hasCmd = true
	s.cmdTS = e.TimeNS
	s.cmdParent = e.ID
	if e.Has&HasParentID != 0 {
		s.cmdParent = e.ParentID
	}
	if e.Has&HasStream != 0 {
		s.cmdStream = e.Stream
	}
	if e.Has&HasDevice != 0 {
		s.cmdDevice = e.Device
		j.device(e.Device)
	}
	if s.cmdParent != e.ID {
		p := j.parent(s.cmdParent)
		if p.childCmds == 0 || e.TimeNS < p.firstSubmit {
			p.firstSubmit = e.TimeNS
		}
		p.childCmds++
		if p.childDevice < 0 {
			p.childDevice = s.cmdDevice
		}
		if p.childStream < 0 {
			p.childStream = s.cmdStream
		}
		if s.hasRsp && !s.linked {
			j.link(s, p)
		}
	}
	j.try(e.ID, s)
}

func (j *Joiner) link(c, p *slot) {
	c.linked = true
	p.childRsps++
	p.dmaExec += c.exec
	p.dmaWait += c.wait
	st, end := c.start+c.wait, c.start+c.wait+c.exec
	if p.childRsps == 1 || st < p.firstStart {
		p.firstStart = st
	}
	if end > p.lastEnd {
		p.lastEnd = end
	}
	if !p.childRspSet {
		p.childRspType, p.childRspSet = c.rspType, true
	}
}

func (j *Joiner) response(e *Event) {
	if s := j.slot(e.ID); s != nil && s.hasRsp {
		j.release(e.ID)
	}
	s := j.get(e.ID)
	s.hasRsp = true
	s.rspTS = e.TimeNS
	s.rspType = e.RspType
	s.rspThread = e.Thread
	s.start, s.wait, s.exec = e.DevStartCycles, e.DevWaitCycles, e.DevExecCycles
	if s.hasCmd && s.cmdParent != e.ID {
		j.link(s, j.parent(s.cmdParent))
		// The parent may now be complete.
		if p := j.slot(s.cmdParent); p != nil {
			j.try(s.cmdParent, p)
		}
	}
	j.try(e.ID, s)
}

func (j *Joiner) dispatch(e *Event) {
	if s := j.slot(e.ID); s != nil && s.hasDisp {
		j.release(e.ID)
	}
	s := j.get(e.ID)
	s.hasDisp = true
	s.dispTS = e.TimeNS
	j.try(e.ID, s)
}

// try emits the group of id if it is complete, or queues it to wait for a
// late API event.
func (j *Joiner) try(id uint16, s *slot) {
	switch {
	case s.apiClass == ClassKernelLaunch:
		if s.hasRsp && s.hasDisp {
			j.release(id)
		}
	case s.apiClass == ClassLoadCode:
		if s.hasDisp {
			j.release(id)
		}
	case s.apiClass != "":
		if s.hasDisp && s.childRsps >= s.childCmds {
			j.release(id)
		}
	case s.hasDisp && !s.deferred:
		// A finished group with no API event yet: a kernel or memcpy
		// whose API event comes later in the file, an internal copy, or
		// a plain command/sync id. Wait a little for the API event.
		if (s.hasCmd && !s.hasRsp) || s.childRsps < s.childCmds {
			return
		}
		s.deferred = true
		j.queue = append(j.queue, deferred{id: id, gen: s.gen, index: j.index})
	}
}

// drain emits deferred groups older than the window (all when final).
func (j *Joiner) drain(final bool) {
	for j.qhead < len(j.queue) {
		d := j.queue[j.qhead]
		if !final && j.index-d.index < deferWindow {
			break
		}
		j.qhead++
		if s := j.slot(d.id); s != nil && s.gen == d.gen {
			j.release(d.id)
		}
	}
	if j.qhead > 1024 && j.qhead*2 > len(j.queue) {
		j.queue = append(j.queue[:0], j.queue[j.qhead:]...)
		j.qhead = 0
	}
}

// Flush emits every pending group (as incomplete where parts are
// missing) and returns the statistics. Call it once, after the last Add.
func (j *Joiner) Flush() JoinStats {
	j.drain(true)
	for id := 0; id < 65536 && j.live > 0; id++ {
		if j.slot(uint16(id)) != nil {
			j.release(uint16(id))
		}
	}
	return j.stats
}

func (j *Joiner) resolveDevice(dev, stream int, rspThread uint64) int {
	if dev >= 0 {
		return dev
	}
	if t := j.threads[rspThread]; t != nil && t.receiverN >= 0 {
		return t.receiverN
	}
	if stream >= 0 {
		if d, ok := j.streamDev[stream]; ok {
			return d
		}
	}
	return -1
}

func (j *Joiner) emit(id uint16, s *slot) {
	isKernel := s.apiClass == ClassKernelLaunch ||
		(s.apiClass == "" && s.hasCmd && s.cmdParent == id && s.hasRsp && s.rspType == RspKernel)
	switch {
	case isKernel:
		j.emitLaunch(id, s)
	case s.apiClass == ClassMemcpyHostToDevice || s.apiClass == ClassMemcpyDeviceToHost || s.apiClass == ClassMemcpyDeviceToDevice:
		j.emitCopy(id, s)
	case s.apiClass == "" && (s.childCmds > 0):
		j.emitCopy(id, s)
	case s.apiClass == "" && s.hasRsp && !s.hasCmd:
		j.stats.UnmatchedResponses++
		j.opts.Warnings.Add("unmatched-response", -1, -1, "response for event %d has no CommandSent or API event", id)
	}
}

func (j *Joiner) emitLaunch(id uint16, s *slot) {
	l := Launch{EventID: id, KernelID: s.kernelID, Device: -1, Stream: s.apiStream}
	if s.apiClass != "" {
		l.Status |= SeenAPI
		l.LaunchNS, l.LaunchAPINS = s.apiTS, s.apiDur
	}
	if s.hasCmd {
		l.Status |= SeenCommand
		l.SubmitNS = s.cmdTS
		if l.Stream < 0 {
			l.Stream = s.cmdStream
		}
	}
	if s.hasRsp {
		l.Status |= SeenResponse
		l.ResponseNS = s.rspTS
		l.StartCycles, l.WaitCycles, l.ExecCycles = s.start, s.wait, s.exec
	}
	if s.hasDisp {
		l.Status |= SeenDispatch
		l.DispatchNS = s.dispTS
	}
	l.Device = j.resolveDevice(s.cmdDevice, l.Stream, s.rspThread)
	l.FreqMHz = j.freq(l.Device)
	if l.KernelID >= 0 {
		l.Kernel = j.opts.Kernels.Label(l.KernelID)
	} else {
		l.Kernel = "kernel#?"
	}
	if l.Device >= 0 && l.Stream >= 0 {
		j.streamOn(l.Device, l.Stream)
	}
	j.stats.Launches++
	if !l.Complete() {
		j.stats.IncompleteLaunches++
	}
	if l.Status&SeenAPI == 0 {
		j.stats.LaunchesWithoutAPI++
	}
	j.seq++
	l.Seq = j.seq
	if j.opts.OnLaunch != nil {
		j.opts.OnLaunch(&l)
	}
}

func (j *Joiner) emitCopy(id uint16, s *slot) {
	c := Copy{EventID: id, Class: s.apiClass, Device: -1, Stream: s.apiStream}
	switch s.apiClass {
	case ClassMemcpyHostToDevice:
		c.Direction = H2D
	case ClassMemcpyDeviceToHost:
		c.Direction = D2H
	case ClassMemcpyDeviceToDevice:
		c.Direction = D2D
	default:
		c.Direction = Internal
	}
	if s.apiClass != "" {
		c.Status |= SeenAPI
		c.APINS, c.APIDurNS = s.apiTS, s.apiDur
		c.Bytes, c.SizeKnown, c.Barrier = s.size, s.sizeKnown, s.barrier
	}
	if s.childCmds > 0 {
		c.Status |= SeenCommand
		c.SubmitNS = s.firstSubmit
	}
	if s.childRsps > 0 {
		c.Status |= SeenResponse
	}
	if s.hasDisp {
		c.Status |= SeenDispatch
		c.DispatchNS = s.dispTS
	}
	if c.Stream < 0 {
		c.Stream = s.childStream
	}
	dev := s.childDevice
	if dev < 0 && s.apiClass != ClassMemcpyDeviceToDevice {
		dev = s.apiDevice
	}
	c.Device = j.resolveDevice(dev, c.Stream, 0)
	c.Commands, c.Responses = s.childCmds, s.childRsps
	c.DMAExecCycles, c.DMAWaitCycles = s.dmaExec, s.dmaWait
	c.FirstStartCycles, c.LastEndCycles = s.firstStart, s.lastEnd
	c.RspType = s.childRspType
	c.CMACopies, c.CMANS = s.cmaN, s.cmaNS
	c.FreqMHz = j.freq(c.Device)
	if c.Device >= 0 && c.Stream >= 0 {
		j.streamOn(c.Device, c.Stream)
	}
	j.stats.Copies++
	if c.Status&SeenDispatch == 0 || c.Responses < c.Commands {
		j.stats.IncompleteCopies++
	}
	j.seq++
	c.Seq = j.seq
	if j.opts.OnCopy != nil {
		j.opts.OnCopy(&c)
	}
}

func (j *Joiner) streamOn(dev, stream int) {
	d := j.device(dev)
	i := sort.SearchInts(d.Streams, stream)
	if i < len(d.Streams) && d.Streams[i] == stream {
		return
	}
	d.Streams = append(d.Streams, 0)
	copy(d.Streams[i+1:], d.Streams[i:])
	d.Streams[i] = stream
}

// Devices returns the devices seen, sorted by id, with the frequency used.
func (j *Joiner) Devices() []Device {
	var out []Device
	for id, d := range j.devices {
		dd := *d
		dd.FreqMHz = j.freq(id)
		dd.Streams = append([]int(nil), d.Streams...)
		out = append(out, dd)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Threads returns the host threads in order of first appearance, with
// their names or synthetic labels.
func (j *Joiner) Threads() []Thread {
	out := make([]Thread, 0, len(j.threadOrder))
	n := 0
	for _, id := range j.threadOrder {
		t := j.threads[id]
		th := Thread{ID: id, Name: t.name, Named: t.named, Events: t.events}
		if !t.named {
			switch {
			case id == j.mainThread && j.haveStart:
				th.Name = "main"
			case t.cma > 0:
				th.Name = "dma-pool"
			case t.dispatch == t.events:
				th.Name = "callback"
			default:
				n++
				th.Name = "thread " + strconv.Itoa(n)
			}
		}
		out = append(out, th)
	}
	return out
}

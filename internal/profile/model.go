package profile

import "github.com/ainekko/et/internal/kernelmap"

// Direction classifies a copy.
type Direction uint8

// Copy directions. Internal copies are DMA commands with no memcpy API
// event (code-load segments, kernel-argument staging).
const (
	H2D Direction = iota
	D2H
	D2D
	Internal
)

// Directions lists the directions in report order.
var Directions = []Direction{H2D, D2H, D2D, Internal}

func (d Direction) String() string {
	switch d {
	case H2D:
		return "H2D"
	case D2H:
		return "D2H"
	case D2D:
		return "D2D"
	}
	return "internal"
}

// Status flags of a joined record: which of its events were found.
type Status uint8

// Status bits.
const (
	SeenAPI      Status = 1 << iota // the API event (KernelLaunch, Memcpy*)
	SeenCommand                     // CommandSent
	SeenResponse                    // ResponseReceived (device cycles known)
	SeenDispatch                    // DispatchEvent of the API event id
)

// Launch is one kernel launch, joined from KernelLaunch, CommandSent,
// ResponseReceived (rsp_type 2) and DispatchEvent with the same event id.
// Host times are absolute steady-clock ns; zero when the event is missing
// (see Status).
type Launch struct {
	EventID uint16
	Status  Status
	// KernelID is the runtime kernel id, -1 if unknown.
	KernelID int
	// Kernel is the kernel name from the kernel map, or "kernel#<id>",
	// or "kernel#?" when the launch event is missing.
	Kernel string
	// Device and Stream are -1 when unknown.
	Device int
	Stream int
	// LaunchNS is the KernelLaunch time stamp (API call start).
	LaunchNS int64
	// LaunchAPINS is the KernelLaunch duration: host launch API time.
	LaunchAPINS int64
	// SubmitNS is the CommandSent time stamp.
	SubmitNS int64
	// ResponseNS is the ResponseReceived time stamp.
	ResponseNS int64
	// DispatchNS is the DispatchEvent time stamp (completion seen by host).
	DispatchNS int64
	// StartCycles, WaitCycles and ExecCycles are device_cmd_start_ts,
	// _wait_dur and _exec_dur, in device cycles.
	StartCycles uint64
	WaitCycles  uint64
	ExecCycles  uint64
	// FreqMHz is the device frequency used for the _NS conversions, 0 if
	// unknown (the conversions then return 0).
	FreqMHz uint32
	// Seq is the order in which the joiner completed the record.
	Seq int
}

// Complete reports whether the launch was seen from API call to dispatch.
func (l *Launch) Complete() bool {
	return l.Status&(SeenAPI|SeenResponse|SeenDispatch) == SeenAPI|SeenResponse|SeenDispatch
}

// DispatchCycles is the device time the kernel started (start + wait).
func (l *Launch) DispatchCycles() uint64 {
	s, _ := addCycles(l.StartCycles, l.WaitCycles)
	return s
}

// EndCycles is the device time the kernel finished.
// Sums saturate at 2^64-1 (the validator warns of such cycles).
func (l *Launch) EndCycles() uint64 {
	s, _ := addCycles(l.StartCycles, l.WaitCycles, l.ExecCycles)
	return s
}

// ExecNS is the device execution time in ns (0 if the frequency is unknown).
func (l *Launch) ExecNS() int64 { return CyclesToNS(l.ExecCycles, l.FreqMHz) }

// WaitNS is the device queue+barrier wait in ns.
func (l *Launch) WaitNS() int64 { return CyclesToNS(l.WaitCycles, l.FreqMHz) }

// SubmitDelayNS is CommandSent − KernelLaunch: time in the runtime's
// in-order queue; -1 when either is missing.
func (l *Launch) SubmitDelayNS() int64 {
	if l.Status&(SeenAPI|SeenCommand) != SeenAPI|SeenCommand {
		return -1
	}
	return l.SubmitNS - l.LaunchNS
}

// EndToEndNS is DispatchEvent − KernelLaunch; -1 when either is missing.
func (l *Launch) EndToEndNS() int64 {
	if l.Status&(SeenAPI|SeenDispatch) != SeenAPI|SeenDispatch {
		return -1
	}
	return l.DispatchNS - l.LaunchNS
}

// Copy is one memcpy API call (or one group of internal DMA commands
// sharing a parent id), joined with its DMA commands and CMA copies by
// parent_id.
type Copy struct {
	EventID   uint16
	Status    Status
	Direction Direction
	// Class is the API class (ClassMemcpyHostToDevice, ...), empty for
	// internal copies.
	Class string
	// Device and Stream are -1 when unknown (from the API event or the
	// first DMA command).
	Device int
	Stream int
	// Bytes is the API "size"; SizeKnown is false for MemcpyList variants
	// and internal copies.
	Bytes     uint64
	SizeKnown bool
	Barrier   bool
	// APINS is the API event time stamp and APIDurNS its duration.
	APINS    int64
	APIDurNS int64
	// SubmitNS is the first CommandSent time stamp.
	SubmitNS int64
	// DispatchNS is the DispatchEvent time of the API id.
	DispatchNS int64
	// Commands counts DMA commands (CommandSent with this parent) and
	// Responses their ResponseReceived.
	Commands  int
	Responses int
	// DMAExecCycles and DMAWaitCycles sum the child responses.
	DMAExecCycles uint64
	DMAWaitCycles uint64
	// FirstStartCycles is the earliest dispatch (start+wait) and
	// LastEndCycles the latest end of the child commands, device cycles.
	FirstStartCycles uint64
	LastEndCycles    uint64
	// RspType is the response type of the (first) child command.
	RspType RspType
	// CMACopies counts CmaCopy events with this parent; CMANS sums their
	// durations (host staging time).
	CMACopies int
	CMANS     int64
	FreqMHz   uint32
	Seq       int
}

// DMAExecNS is the summed device DMA time in ns.
func (c *Copy) DMAExecNS() int64 { return CyclesToNS(c.DMAExecCycles, c.FreqMHz) }

// DMAWaitNS is the summed device wait in ns.
func (c *Copy) DMAWaitNS() int64 { return CyclesToNS(c.DMAWaitCycles, c.FreqMHz) }

// EndToEndNS is DispatchEvent − API start; -1 when either is missing.
func (c *Copy) EndToEndNS() int64 {
	if c.Status&(SeenAPI|SeenDispatch) != SeenAPI|SeenDispatch {
		return -1
	}
	return c.DispatchNS - c.APINS
}

// CyclesToNS converts device cycles to ns at freqMHz (0 if freqMHz is 0),
// without overflow for any cycle count below 2^64 / 1000.
func CyclesToNS(cycles uint64, freqMHz uint32) int64 {
	if freqMHz == 0 {
		return 0
	}
	f := uint64(freqMHz)
	ns := cycles/f*1000 + cycles%f*1000/f
	if ns > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(ns)
}

// Device is what the trace says about one device.
type Device struct {
	ID int `json:"id"`
	// FreqMHz is the frequency used for conversions: the --freq-mhz
	// override, else GetDeviceProperties, else 0.
	FreqMHz uint32 `json:"frequency_mhz"`
	// Props are from the first GetDeviceProperties of this device.
	Props *DeviceProps `json:"properties,omitempty"`
	// Streams are the streams seen on this device, sorted.
	Streams []int `json:"streams"`
}

// Thread is one host thread of the trace.
type Thread struct {
	ID uint64 `json:"id"`
	// Name is from IdentifyThread, or a synthetic label: "main" for the
	// thread of StartProfiling, "dma-pool" for threads that record
	// CmaCopy, "callback" for threads that record only DispatchEvent,
	// else "thread N".
	Name string `json:"name"`
	// Named reports whether Name came from IdentifyThread.
	Named bool `json:"named"`
	// Events is the number of events the thread recorded.
	Events int `json:"events"`
}

// JoinOptions configure a Joiner.
type JoinOptions struct {
	// Kernels names kernel ids; nil or empty means "kernel#<id>".
	Kernels *kernelmap.Map
	// FreqMHz, when non-zero, overrides every device's frequency; it is
	// also the fallback when OverrideFreq is false and a device has no
	// GetDeviceProperties.
	FreqMHz      uint32
	OverrideFreq bool
	// Warnings collects join warnings (unmatched events, id wraps).
	Warnings *Warnings
	// OnLaunch and OnCopy receive each joined record once, in completion
	// order (not time order). The pointer is valid only during the call.
	OnLaunch func(*Launch)
	OnCopy   func(*Copy)
}

package profile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ainekko/et/internal/infile"
)

// Event types (the "type" member).
const (
	TypeStart    = "Start"
	TypeEnd      = "End"
	TypeComplete = "Complete"
	TypeInstant  = "Instant"
	TypeCounter  = "Counter"
)

// Event classes (the "class" member) that the runtime emits or that the
// enum defines.
const (
	ClassGetDevices           = "GetDevices"
	ClassLoadCode             = "LoadCode"
	ClassUnloadCode           = "UnloadCode"
	ClassMallocDevice         = "MallocDevice"
	ClassFreeDevice           = "FreeDevice"
	ClassCreateStream         = "CreateStream"
	ClassDestroyStream        = "DestroyStream"
	ClassKernelLaunch         = "KernelLaunch"
	ClassMemcpyHostToDevice   = "MemcpyHostToDevice"
	ClassMemcpyDeviceToHost   = "MemcpyDeviceToHost"
	ClassWaitForEvent         = "WaitForEvent"
	ClassWaitForStream        = "WaitForStream"
	ClassDeviceCommand        = "DeviceCommand"
	ClassPmc                  = "Pmc"
	ClassCommandSent          = "CommandSent"
	ClassResponseReceived     = "ResponseReceived"
	ClassDispatchEvent        = "DispatchEvent"
	ClassGetDeviceProperties  = "GetDeviceProperties"
	ClassStartProfiling       = "StartProfiling"
	ClassEndProfiling         = "EndProfiling"
	ClassCmaCopy              = "CmaCopy"
	ClassCmaWait              = "CmaWait"
	ClassMemcpyDeviceToDevice = "MemcpyDeviceToDevice"
	ClassSyncTime             = "SyncTime"
	ClassIdentifyThread       = "IdentifyThread"
	ClassMemoryStats          = "MemoryStats"
)

// RspType is the ResponseType of a ResponseReceived event.
type RspType uint8

// Response types (device-centric DMA naming: DMARead is device → host).
const (
	RspDMARead  RspType = 0 // D2H
	RspDMAWrite RspType = 1 // H2D
	RspKernel   RspType = 2
	RspDMAP2P   RspType = 3 // D2D
)

func (t RspType) String() string {
	switch t {
	case RspDMARead:
		return "DMARead"
	case RspDMAWrite:
		return "DMAWrite"
	case RspKernel:
		return "Kernel"
	case RspDMAP2P:
		return "DMAP2P"
	}
	return fmt.Sprintf("RspType(%d)", uint8(t))
}

// Field is a bit set of the optional members of an Event that were
// present in the trace (the extras, plus a few derived facts).
type Field uint64

// Fields of Event.Has.
const (
	HasID           Field = 1 << iota // extra "event"
	HasParentID                       // "parent_id"
	HasStream                         // "stream"
	HasDevice                         // "device_id"
	HasKernelID                       // "kernel_id"
	HasRspType                        // "rsp_type"
	HasDuration                       // "duration"
	HasVersion                        // "version"
	HasDevStart                       // "device_cmd_start_ts"
	HasDevWait                        // "device_cmd_wait_dur"
	HasDevExec                        // "device_cmd_exec_dur"
	HasSize                           // "size"
	HasPtr                            // "ptr"
	HasSrcPtr                         // "src_ptr"
	HasDstPtr                         // "dst_ptr"
	HasLoadAddress                    // "load_address"
	HasAlignment                      // "alignment"
	HasBarrier                        // "barrier"
	HasThreadName                     // "thread_name"
	HasProps                          // "device_properties"
	HasMemAllocated                   // "mem.allocated_memory"
	HasMemFree                        // "mem.free_memory"
	HasMemMaxContig                   // "mem.max_contiguous_free_mem"
	HasSystemTime                     // "system_timepoint"
	HasServerPID                      // "server_pid"
	HasPairID                         // "pair_id" (legacy Start/End pairing)
	HasTime                           // the timeStamp member was present
	HasThread                         // the thread_id member was present
)

// DeviceProps are the fields of a device_properties value that et uses.
// The full set of fields is described in reference §1.5; the others are
// skipped.
type DeviceProps struct {
	// FrequencyMHz is the minion boot frequency in MHz; 0 if absent.
	FrequencyMHz    uint32 `json:"frequency_mhz"`
	AvailableShires uint32 `json:"available_shires"`
	// MemoryBWMBps is the DDR bandwidth in MB/s.
	MemoryBWMBps    uint32 `json:"memory_bw_mbps"`
	MemorySizeBytes uint64 `json:"memory_size_bytes"`
	CacheLineBytes  uint32 `json:"cache_line_bytes"`
	ShireMask       uint64 `json:"compute_minion_shire_mask"`
	ArchRev         int    `json:"device_arch_rev"`
	FormFactor      int    `json:"form_factor"`
	TDPWatts        uint32 `json:"tdp_watts"`
}

// Extra is an extra value the decoder did not interpret: an unknown key,
// or a known key whose variant index or data was not the expected one.
type Extra struct {
	Key   string
	Index int
	// Raw is the JSON text of the "data" member, as in the file.
	Raw string
}

// Event is one decoded trace event. Only the members flagged in Has are
// meaningful; the others are zero.
type Event struct {
	// Index is the event's position in the file (0-based, record order).
	Index int
	// Key is N of the "valueN" key the event was stored under, or -1 when
	// the key does not have that form. Validator checks Key == Index.
	Key int
	// Offset is the byte offset of the event's opening brace.
	Offset int64

	// Type is the "type" string (TypeComplete, ...); unknown strings are
	// kept as they are.
	Type string
	// Class is the "class" string (ClassKernelLaunch, ...); unknown
	// strings are kept as they are.
	Class string
	// TimeNS is the host steady_clock time stamp in nanoseconds (since
	// host boot). For Complete events it is the start of the scope.
	TimeNS int64
	// Thread is the thread_id string parsed as a number (the pthread_t
	// value). Non-numeric thread ids get a synthetic value with the top
	// bit set.
	Thread uint64

	// Has flags the optional members below that were present.
	Has Field
	// BadTime: the time stamp's count is there but is not an integer in
	// int64's range (TimeNS is then unset and HasTime clear).
	BadTime bool

	ID       uint16 // "event": API, command or sync event id (wraps at 65536)
	ParentID uint16 // "parent_id": API event a command or CMA copy belongs to
	Stream   int    // "stream"
	Device   int    // "device_id"
	KernelID int    // "kernel_id"
	RspType  RspType
	// DurationNS is the host time spent in the API call or scope, ns.
	DurationNS int64
	Version    int

	// DevStartCycles is device_cmd_start_ts (device cycles).
	DevStartCycles uint64
	// DevWaitCycles is device_cmd_wait_dur (device cycles).
	DevWaitCycles uint64
	// DevExecCycles is device_cmd_exec_dur (device cycles).
	DevExecCycles uint64

	// SizeBytes is "size" (bytes).
	SizeBytes   uint64
	Ptr         uint64
	SrcPtr      uint64
	DstPtr      uint64
	LoadAddress uint64
	// AlignmentBytes is "alignment".
	AlignmentBytes uint32
	Barrier        bool
	ThreadName     string
	// Props is set on GetDeviceProperties events.
	Props *DeviceProps

	MemAllocatedBytes uint64
	MemFreeBytes      uint64
	MemMaxContigBytes uint64
	SystemTimeNS      int64 // "system_timepoint": ns since the Unix epoch
	ServerPID         uint64
	PairID            uint64

	// Extras are the extra values that were not interpreted (unknown
	// keys, unexpected variant indices), in file order.
	Extras []Extra
}

// EndNS is the end of a Complete event (TimeNS + DurationNS), or TimeNS.
func (e *Event) EndNS() int64 {
	if e.Has&HasDuration != 0 {
		return e.TimeNS + e.DurationNS
	}
	return e.TimeNS
}

// Options configure Decode.
type Options struct {
	// File names the input in errors and warnings ("trace.json: byte N").
	File string
	// Warnings collects warnings; nil means they are dropped.
	Warnings *Warnings
}

// Stats summarise a decoded trace.
type Stats struct {
	// Events is the number of complete events decoded.
	Events int
	// Bytes is the number of bytes read.
	Bytes int64
	// Version is the trace version from StartProfiling (0 if absent).
	Version int
	// Truncated is set when the file ended before the root object was
	// closed (a crashed run); TruncatedAt is then the file size and
	// LastEventEnd the offset just after the last complete event.
	Truncated    bool
	TruncatedAt  int64
	LastEventEnd int64
	// Empty is set when the file held no bytes (or only white space).
	Empty bool
	// UnknownClasses, UnknownTypes, UnknownMembers and UnknownKeys count
	// the classes, types, event members and extra keys the decoder did
	// not recognise, by name.
	UnknownClasses map[string]int
	UnknownTypes   map[string]int
	UnknownMembers map[string]int
	UnknownKeys    map[string]int
	// BadIndex counts extras whose variant index was not the expected one
	// for their key, by key.
	BadIndex map[string]int
}

// SyntaxError is malformed trace JSON (not truncation). It is an input
// error (exit 2).
type SyntaxError struct {
	File   string
	Offset int64 // byte offset
	Event  int   // index of the event being decoded, -1 outside events
	Msg    string
}

func (e *SyntaxError) Error() string {
	f := e.File
	if f == "" {
		f = "trace"
	}
	if e.Event >= 0 {
		return fmt.Sprintf("parsing trace: %s: byte %d: event %d: %s", f, e.Offset, e.Event, e.Msg)
	}
	return fmt.Sprintf("parsing trace: %s: byte %d: %s", f, e.Offset, e.Msg)
}

// InputError marks SyntaxError as malformed input.
func (*SyntaxError) InputError() {}

// Warning is one distinct warning. Repeats of the same kind are counted,
// not repeated.
type Warning struct {
	// Kind groups repeats ("unknown-class", "truncated", ...).
	Kind string `json:"kind"`
	// Event is the index of the first event concerned, or -1.
	Event int `json:"event"`
	// Offset is the byte offset concerned, or -1.
	Offset int64 `json:"offset"`
	// Message is the first message of this kind.
	Message string `json:"message"`
	// Count is how many times this kind occurred.
	Count int `json:"count"`
}

func (w Warning) String() string {
	s := w.Message
	if w.Count > 1 {
		s += fmt.Sprintf(" (%d times)", w.Count)
	}
	return s
}

// Warnings collects warnings, reporting each kind once with a count.
// The zero value is ready to use; a nil *Warnings drops everything.
type Warnings struct {
	list  []Warning
	index map[string]int
}

// Add records a warning of kind; event and offset may be -1.
func (w *Warnings) Add(kind string, event int, offset int64, format string, args ...any) {
	if w == nil {
		return
	}
	if w.index == nil {
		w.index = map[string]int{}
	}
	kind = clip(kind, maxWarningKind)
	if i, ok := w.index[kind]; ok {
		w.list[i].Count++
		return
	}
	w.index[kind] = len(w.list)
	w.list = append(w.list, Warning{Kind: kind, Event: event, Offset: offset, Message: clip(fmt.Sprintf(format, args...), maxWarning), Count: 1})
}

// Warnings quote the trace (class names, keys): a hostile trace's 50 MB
// string is cut, not echoed whole.
const (
	maxWarning     = 1024
	maxWarningKind = 128
)

// clip cuts s to at most n bytes (at a rune boundary), saying how much
// was cut.
func clip(s string, n int) string { return infile.Clip(s, n) }

// List returns the warnings in the order their kinds first occurred.
func (w *Warnings) List() []Warning {
	if w == nil {
		return nil
	}
	return append([]Warning(nil), w.list...)
}

// Len is the number of distinct warnings.
func (w *Warnings) Len() int {
	if w == nil {
		return 0
	}
	return len(w.list)
}

// sortedCounts formats a name→count map deterministically: "a (2), b".
func sortedCounts(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		if m[n] > 1 {
			parts[i] = fmt.Sprintf("%s (%d)", n, m[n])
		} else {
			parts[i] = n
		}
	}
	return strings.Join(parts, ", ")
}

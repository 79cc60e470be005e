package profile

import "fmt"

// Thread ids the Builder uses for the runtime's threads (pthread_t-like
// values, as real traces carry). MainThread is the application thread
// that calls the API and records StartProfiling; CallbackThread is the
// event manager's callback executor, which dispatches parent events.
const (
	MainThread     uint64 = 139896385697600
	CallbackThread uint64 = 139896119346880
)

// Threads are the runtime threads of one device.
type Threads struct {
	// Sender is "Host Runtime Device N command sender".
	Sender uint64
	// Receiver is "Host Runtime Device N response receiver".
	Receiver uint64
	// Pool is the (unnamed) DMA thread pool that records CmaCopy.
	Pool uint64
}

// DeviceThreads returns the thread ids the Builder uses for device d.
func DeviceThreads(d int) Threads {
	off := uint64(d) * 0x1000000
	return Threads{Sender: 139896144524992 + off, Receiver: 139896136132288 + off, Pool: 139896110954176 + off}
}

// SenderName and ReceiverName are the names the runtime's per-device
// threads give themselves (reference §2.3).
func SenderName(d int) string   { return fmt.Sprintf("Host Runtime Device %d command sender", d) }
func ReceiverName(d int) string { return fmt.Sprintf("Host Runtime Device %d response receiver", d) }

// Builder emits the event sequences the runtime records for its API calls
// (reference §2.2), in the runtime's record order: Complete API events at
// scope exit (after the commands they sent), an IdentifyThread right after
// the first event of each named thread, event ids from one uint16 counter
// that wraps. Generate and the reference device's trace recorder
// (internal/ops/exec) share it.
type Builder struct {
	emit  func(*Event) error
	id    uint16
	wraps int
	named map[uint64]bool
	err   error
}

// NewBuilder returns a Builder passing every event to emit; firstID is the
// first event id NextID returns. After the first error from emit, nothing
// more is emitted and Err returns it.
func NewBuilder(emit func(*Event) error, firstID uint16) *Builder {
	return &Builder{emit: emit, id: firstID, named: map[uint64]bool{}}
}

// NextID allocates the next event id (the runtime's process-global
// EventId counter).
func (b *Builder) NextID() uint16 {
	v := b.id
	b.id++
	if b.id == 0 {
		b.wraps++
	}
	return v
}

// Wraps is how many times the event id counter wrapped past 65535.
func (b *Builder) Wraps() int { return b.wraps }

// Err is the first error returned by emit.
func (b *Builder) Err() error { return b.err }

// Emit records one event.
func (b *Builder) Emit(e *Event) {
	if b.err == nil {
		b.err = b.emit(e)
	}
}

// EmitNamed records an event of a named runtime thread, followed by the
// thread's IdentifyThread the first time the thread records.
func (b *Builder) EmitNamed(e *Event, name string) {
	b.Emit(e)
	if !b.named[e.Thread] {
		b.named[e.Thread] = true
		b.Emit(&Event{Type: TypeInstant, Class: ClassIdentifyThread, TimeNS: e.TimeNS + 250, Thread: e.Thread, Has: HasThreadName, ThreadName: name})
	}
}

// LaunchSpec is one kernel launch (rt::IRuntime::kernelLaunch): host
// times in steady-clock ns, device times in cycles.
type LaunchSpec struct {
	// ID is the launch's event id (the API id is also the command id).
	ID       uint16
	Device   int
	Stream   int
	KernelID int
	Threads  Threads
	// LaunchNS and APIDurNS are the KernelLaunch scope (host launch API).
	LaunchNS int64
	APIDurNS int64
	// SubmitNS is the CommandSent time, ResponseNS the ResponseReceived
	// time and DispatchNS the DispatchEvent time.
	SubmitNS   int64
	ResponseNS int64
	DispatchNS int64
	// StartCycles, WaitCycles and ExecCycles are device_cmd_start_ts,
	// _wait_dur and _exec_dur.
	StartCycles uint64
	WaitCycles  uint64
	ExecCycles  uint64
}

// Launch records a kernel launch: CommandSent, KernelLaunch (recorded
// when the API returns, so after its command), ResponseReceived
// (rsp_type 2, with the device cycles) and DispatchEvent.
func (b *Builder) Launch(s LaunchSpec) {
	b.EmitNamed(&Event{Type: TypeInstant, Class: ClassCommandSent, TimeNS: s.SubmitNS, Thread: s.Threads.Sender,
		Has: HasID | HasParentID | HasStream | HasDevice, ID: s.ID, ParentID: s.ID, Stream: s.Stream, Device: s.Device}, SenderName(s.Device))
	b.Emit(&Event{Type: TypeComplete, Class: ClassKernelLaunch, TimeNS: s.LaunchNS, Thread: MainThread,
		Has: HasDuration | HasID | HasLoadAddress | HasKernelID | HasStream, DurationNS: s.APIDurNS, ID: s.ID,
		LoadAddress: 1<<64 - 1, KernelID: s.KernelID, Stream: s.Stream})
	b.EmitNamed(&Event{Type: TypeInstant, Class: ClassResponseReceived, TimeNS: s.ResponseNS, Thread: s.Threads.Receiver,
		Has: HasID | HasRspType | HasDevStart | HasDevWait | HasDevExec, ID: s.ID, RspType: RspKernel,
		DevStartCycles: s.StartCycles, DevWaitCycles: s.WaitCycles, DevExecCycles: s.ExecCycles}, ReceiverName(s.Device))
	b.Emit(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: s.DispatchNS, Thread: s.Threads.Receiver, Has: HasID, ID: s.ID})
}

// CopySpec is one plain memcpy (rt::IRuntime::memcpyHostToDevice or
// memcpyDeviceToHost) of one DMA command and one CMA staging copy.
type CopySpec struct {
	// Dir is H2D or D2H.
	Dir Direction
	// E is the API event id, C the DMA command id and S the CMA-sync id.
	E, C, S uint16
	Device  int
	Stream  int
	Threads Threads
	// SizeBytes, SrcPtr and DstPtr are the API's size and addresses (host
	// or device, by direction).
	SizeBytes, SrcPtr, DstPtr uint64
	Barrier                   bool
	// APINS and APIDurNS are the Memcpy* scope.
	APINS    int64
	APIDurNS int64
	// CMANS and CMADurNS are the CmaCopy scope (host staging: before the
	// DMA for H2D, after it for D2H); CMADoneNS is its DispatchEvent.
	CMANS     int64
	CMADurNS  int64
	CMADoneNS int64
	// SubmitNS is the CommandSent time, ResponseNS the ResponseReceived
	// time, CmdDoneNS the command's DispatchEvent and DoneNS the API
	// event's DispatchEvent (on the callback thread).
	SubmitNS   int64
	ResponseNS int64
	CmdDoneNS  int64
	DoneNS     int64
	// StartCycles, WaitCycles and ExecCycles are the DMA command's device
	// times.
	StartCycles uint64
	WaitCycles  uint64
	ExecCycles  uint64
	// Internal marks a copy with no API event: E is then only the parent
	// id of the DMA command and the CMA copy (a code-load segment or
	// kernel-argument staging, reference §2.2). It is always H2D.
	Internal bool
	// Wait adds the WaitForEvent{E} that ggml's set_tensor/get_tensor
	// make, at WaitNS for WaitDurNS.
	Wait      bool
	WaitNS    int64
	WaitDurNS int64
}

// Copy records a memcpy in the runtime's order (reference §2.2): for H2D
// the CMA staging copy and its dispatch, the API event, the DMA command,
// its response (rsp_type 1) and dispatch, then the API dispatch; for D2H
// the API event, the DMA command, response (rsp_type 0) and dispatch, the
// CMA copy out and its dispatch, then the API dispatch. Then the optional
// WaitForEvent.
func (b *Builder) Copy(s CopySpec) {
	if s.Internal {
		s.Dir = H2D
	}
	has := HasDuration | HasID | HasStream | HasBarrier | HasSize | HasSrcPtr | HasDstPtr
	api := &Event{Type: TypeComplete, Class: ClassMemcpyHostToDevice, TimeNS: s.APINS, Thread: MainThread, Has: has,
		DurationNS: s.APIDurNS, ID: s.E, Stream: s.Stream, Barrier: s.Barrier, SizeBytes: s.SizeBytes, SrcPtr: s.SrcPtr, DstPtr: s.DstPtr}
	rsp := RspDMAWrite
	if s.Dir == D2H {
		api.Class, rsp = ClassMemcpyDeviceToHost, RspDMARead
	}
	cma := func() {
		b.Emit(&Event{Type: TypeComplete, Class: ClassCmaCopy, TimeNS: s.CMANS, Thread: s.Threads.Pool, Has: HasDuration | HasID | HasParentID, DurationNS: s.CMADurNS, ID: s.S, ParentID: s.E})
		b.Emit(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: s.CMADoneNS, Thread: s.Threads.Pool, Has: HasID, ID: s.S})
	}
	if s.Dir != D2H {
		cma()
	}
	if !s.Internal {
		b.Emit(api)
	}
	b.EmitNamed(&Event{Type: TypeInstant, Class: ClassCommandSent, TimeNS: s.SubmitNS, Thread: s.Threads.Sender,
		Has: HasID | HasParentID | HasStream | HasDevice, ID: s.C, ParentID: s.E, Stream: s.Stream, Device: s.Device}, SenderName(s.Device))
	b.EmitNamed(&Event{Type: TypeInstant, Class: ClassResponseReceived, TimeNS: s.ResponseNS, Thread: s.Threads.Receiver,
		Has: HasID | HasRspType | HasDevStart | HasDevWait | HasDevExec, ID: s.C, RspType: rsp,
		DevStartCycles: s.StartCycles, DevWaitCycles: s.WaitCycles, DevExecCycles: s.ExecCycles}, ReceiverName(s.Device))
	b.Emit(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: s.CmdDoneNS, Thread: s.Threads.Receiver, Has: HasID, ID: s.C})
	if s.Dir == D2H {
		cma()
	}
	b.Emit(&Event{Type: TypeInstant, Class: ClassDispatchEvent, TimeNS: s.DoneNS, Thread: CallbackThread, Has: HasID, ID: s.E})
	if s.Wait {
		b.Emit(&Event{Type: TypeComplete, Class: ClassWaitForEvent, TimeNS: s.WaitNS, Thread: MainThread, Has: HasDuration | HasID, DurationNS: s.WaitDurNS, ID: s.E})
	}
}

package exec

import (
	"context"
	"io"
	"reflect"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/profile"
)

// TraceBaseNS is the host time stamp of a recorded trace's StartProfiling.
// The runtime stamps events with the host's steady clock (ns since boot);
// a recorder stamps them with its clock's time since recording started,
// plus this offset, so no time stamp is zero.
const TraceBaseNS = 1_000_000_000

// TraceRecorder records what a run does on a device as the ET runtime's
// profiler would (et_runtime_trace.json, reference et-runtime-trace.md
// §2.2), for devices that write no trace of their own (the reference
// device), and the kernel map ggml-et writes beside it (kernel_id.json).
// Set it in Options.Trace; it may span several runs, like one ggml
// process.
//
// Each device call is recorded with the events the runtime emits for it:
// the device's first use gives GetDevices, GetDeviceProperties and
// CreateStream; Malloc and Free give MemoryStats and MallocDevice or
// FreeDevice; a first LoadKernel of a name gives LoadCode (with an internal
// segment copy when ELF bytes are given) and a wait, as ggml loads each
// kernel once; Write and Read give a memcpy (CMA copy, one DMA command, the
// dispatches) followed by WaitForEvent, as ggml's set_tensor/get_tensor;
// Launch gives CommandSent, KernelLaunch, ResponseReceived and
// DispatchEvent; Sync gives WaitForStream. Uberkernel segments are
// launches of the kernel "uberkernel" (per-op attribution is unavailable,
// as on hardware).
//
// Host time stamps come from the clock, so host spans are what the calls
// really took. Device times are in cycles on a per-device clock that runs
// the commands back to back (no idle time; every command is a barrier, as
// in ggml): a launch's exec is the device's simulated cycles when it
// implements driver.Timer (the reference device does), a copy's exec is
// Timer.CopyCycles; without a Timer both are the host time of the call at
// the device frequency. Device and host times are therefore not aligned,
// as on sysemu.
//
// A TraceRecorder is not safe for concurrent use.
type TraceRecorder struct {
	now      func() time.Time
	t0       time.Time
	started  bool
	finished bool
	closed   bool // EndProfiling recorded: later events are dropped
	events   []profile.Event
	b        *profile.Builder
	devs     []*traceDevice
	kernels  []kernelmap.Entry
	// nextKernel is the runtime's process-global KernelId counter.
	nextKernel int
}

// NewTraceRecorder returns a recorder stamping events with now; nil means
// the clock (Options.Now) of the first run it records.
func NewTraceRecorder(now func() time.Time) *TraceRecorder {
	r := &TraceRecorder{now: now}
	r.b = profile.NewBuilder(func(e *profile.Event) error {
		if !r.closed {
			r.events = append(r.events, *e)
		}
		return nil
	}, 1)
	return r
}

// start records StartProfiling at the first use.
func (r *TraceRecorder) start(now func() time.Time) {
	if r.started {
		return
	}
	if r.now == nil {
		r.now = now
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.started = true
	r.t0 = r.now()
	r.b.Emit(&profile.Event{Type: profile.TypeInstant, Class: profile.ClassStartProfiling, TimeNS: TraceBaseNS,
		Thread: profile.MainThread, Has: profile.HasVersion, Version: 3})
}

// stamp is the host time stamp of now.
func (r *TraceRecorder) stamp() int64 {
	return TraceBaseNS + r.now().Sub(r.t0).Nanoseconds()
}

// attach returns dev wrapped so that its calls are recorded; a device
// already seen keeps its device id, stream and loaded kernels.
func (r *TraceRecorder) attach(dev driver.Device, now func() time.Time) driver.Device {
	r.start(now)
	if t, ok := dev.(*traceDevice); ok && t.rec == r {
		return t
	}
	for _, t := range r.devs {
		if sameDevice(t.dev, dev) {
			return t
		}
	}
	info := dev.Info()
	id := info.Index
	for _, t := range r.devs {
		if t.id == id {
			id = len(r.devs)
			break
		}
	}
	t := &traceDevice{rec: r, dev: dev, id: id, stream: len(r.devs) + 1, th: profile.DeviceThreads(id),
		freq: info.Props.FrequencyMHz, total: info.Props.MemoryBytes,
		kern: map[driver.KernelID]int{}, byName: map[string]int{}, alloc: map[driver.DevPtr]uint64{}}
	if t.freq == 0 {
		t.freq = 1000
	}
	t.timer, _ = dev.(driver.Timer)
	if t.timer != nil {
		t.seen = len(t.timer.LaunchTimings(0))
	}
	r.devs = append(r.devs, t)
	b := r.b
	ts := r.stamp()
	b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassGetDevices, TimeNS: ts, Thread: profile.MainThread,
		Has: profile.HasDuration})
	b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassGetDeviceProperties, TimeNS: ts, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasDevice | profile.HasProps, Device: id, Props: traceProps(info.Props)})
	b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassCreateStream, TimeNS: ts, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasDevice | profile.HasStream, Device: id, Stream: t.stream})
	return t
}

// sameDevice compares two devices; devices of a type that cannot be
// compared are never the same.
func sameDevice(a, b driver.Device) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// traceProps converts device properties to the trace's.
func traceProps(p driver.Props) *profile.DeviceProps {
	arch := driver.ArchValue(p.Arch)
	form := 0
	if p.FormFactor == "m2" {
		form = 1
	}
	return &profile.DeviceProps{FrequencyMHz: p.FrequencyMHz, AvailableShires: p.AvailableShires,
		MemoryBWMBps: p.MemoryBandwidthMBps, MemorySizeBytes: p.MemoryBytes, CacheLineBytes: p.CacheLineBytes,
		ShireMask: uint64(p.ComputeShireMask), ArchRev: arch, FormFactor: form, TDPWatts: p.TDPW}
}

// Kernels returns the kernel map: every kernel loaded, with the KernelId
// the trace gives it, in load order.
func (r *TraceRecorder) Kernels() []kernelmap.Entry {
	return append([]kernelmap.Entry(nil), r.kernels...)
}

// Finish records the end of the process as ggml-et's exit does: the
// kernels unloaded, a last WaitForStream per device, then EndProfiling.
// Later calls do nothing; nothing is recorded after it.
func (r *TraceRecorder) Finish() {
	if r.finished {
		return
	}
	r.start(nil)
	r.finished = true
	for _, t := range r.devs {
		for _, k := range t.loaded {
			t0 := r.stamp()
			r.b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassUnloadCode, TimeNS: t0, Thread: profile.MainThread,
				Has: profile.HasDuration | profile.HasKernelID, DurationNS: r.stamp() - t0, KernelID: k})
		}
		t0 := r.stamp()
		r.b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassWaitForStream, TimeNS: t0, Thread: profile.MainThread,
			Has: profile.HasDuration | profile.HasStream, DurationNS: r.stamp() - t0, Stream: t.stream})
	}
	r.b.Emit(&profile.Event{Type: profile.TypeInstant, Class: profile.ClassEndProfiling, TimeNS: r.stamp(), Thread: profile.MainThread})
	r.closed = true
}

// WriteTrace finishes the recording and writes et_runtime_trace.json, in
// the runtime's byte format.
func (r *TraceRecorder) WriteTrace(w io.Writer) error {
	r.Finish()
	pw := profile.NewWriter(w)
	for i := range r.events {
		if err := pw.Write(&r.events[i]); err != nil {
			return err
		}
	}
	return pw.Close()
}

// WriteKernelMap writes kernel_id.json in ggml-et's format.
func (r *TraceRecorder) WriteKernelMap(w io.Writer) error {
	return kernelmap.Write(w, r.kernels)
}

// traceDevice is a driver.Device that records its calls into a
// TraceRecorder.
type traceDevice struct {
	rec    *TraceRecorder
	dev    driver.Device
	id     int
	stream int
	th     profile.Threads
	freq   uint32
	timer  driver.Timer
	// seen is the number of Timer launch timings consumed.
	seen int
	// clock is the device cycle counter: the end of the last command.
	clock uint64
	// kern maps the device's kernel ids to trace KernelIds; byName the
	// kernel names loaded on this device; loaded lists them in order.
	kern   map[driver.KernelID]int
	byName map[string]int
	loaded []int
	// alloc is the size of each live allocation; allocated their sum and
	// total the device memory.
	alloc     map[driver.DevPtr]uint64
	allocated uint64
	total     uint64
}

var _ driver.Device = (*traceDevice)(nil)

func (t *traceDevice) Info() driver.Info { return t.dev.Info() }
func (t *traceDevice) Close() error      { return t.dev.Close() }

// hostCycles converts host ns to device cycles.
func (t *traceDevice) hostCycles(ns int64) uint64 {
	if ns <= 0 {
		return 0
	}
	return uint64(ns) * uint64(t.freq) / 1000
}

// run advances the device clock by exec cycles and returns the start.
func (t *traceDevice) run(exec uint64) uint64 {
	start := t.clock
	t.clock += exec
	return start
}

func (t *traceDevice) memoryStats(ts int64) {
	free := uint64(0)
	if t.total > t.allocated {
		free = t.total - t.allocated
	}
	t.rec.b.Emit(&profile.Event{Type: profile.TypeCounter, Class: profile.ClassMemoryStats, TimeNS: ts, Thread: profile.MainThread,
		Has: profile.HasDevice | profile.HasMemAllocated | profile.HasMemFree | profile.HasMemMaxContig, Device: t.id,
		MemAllocatedBytes: t.allocated, MemFreeBytes: free, MemMaxContigBytes: free})
}

func (t *traceDevice) Malloc(ctx context.Context, size, align uint64) (driver.DevPtr, error) {
	t0 := t.rec.stamp()
	p, err := t.dev.Malloc(ctx, size, align)
	if err != nil {
		return p, err
	}
	t1 := t.rec.stamp()
	t.alloc[p] = size
	t.allocated += size
	// MemoryStats is recorded inside the call, MallocDevice at its exit.
	t.memoryStats(t1)
	t.rec.b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassMallocDevice, TimeNS: t0, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasDevice | profile.HasSize | profile.HasAlignment | profile.HasPtr, DurationNS: t1 - t0,
		Device: t.id, SizeBytes: size, AlignmentBytes: uint32(align), Ptr: uint64(p)})
	return p, nil
}

func (t *traceDevice) Free(ctx context.Context, p driver.DevPtr) error {
	t0 := t.rec.stamp()
	if err := t.dev.Free(ctx, p); err != nil {
		return err
	}
	t1 := t.rec.stamp()
	t.allocated -= t.alloc[p]
	delete(t.alloc, p)
	t.memoryStats(t1)
	t.rec.b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassFreeDevice, TimeNS: t0, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasDevice | profile.HasPtr, DurationNS: t1 - t0, Device: t.id, Ptr: uint64(p)})
	return nil
}

// hostPtr is the host address of a buffer (the runtime records it as the
// memcpy's src_ptr or dst_ptr).
func hostPtr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(reflect.ValueOf(b).Pointer())
}

// copySpec fills the parts of a copy common to both directions.
func (t *traceDevice) copySpec(dir profile.Direction, n int) profile.CopySpec {
	b := t.rec.b
	exec := uint64(0)
	if t.timer != nil {
		exec = t.timer.CopyCycles(uint64(n))
	}
	return profile.CopySpec{Dir: dir, E: b.NextID(), C: b.NextID(), S: b.NextID(), Device: t.id, Stream: t.stream,
		Threads: t.th, SizeBytes: uint64(n), Barrier: true, ExecCycles: exec}
}

// Write is a memcpyHostToDevice and its wait: the host copy into CMA is
// the call itself; the DMA command and the dispatches follow it.
func (t *traceDevice) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	t0 := t.rec.stamp()
	if err := t.dev.Write(ctx, dst, src); err != nil {
		return err
	}
	t1 := t.rec.stamp()
	s := t.copySpec(profile.H2D, len(src))
	if t.timer == nil {
		s.ExecCycles = t.hostCycles(t1 - t0)
	}
	s.StartCycles = t.run(s.ExecCycles)
	s.SrcPtr, s.DstPtr = hostPtr(src), uint64(dst)
	s.APINS, s.APIDurNS = t0, t1-t0
	s.CMANS, s.CMADurNS, s.CMADoneNS = t0, t1-t0, t1
	s.SubmitNS, s.ResponseNS, s.CmdDoneNS, s.DoneNS = t1, t1, t1, t1
	s.Wait, s.WaitNS = true, t1
	t.rec.b.Copy(s)
	return nil
}

// Read is a memcpyDeviceToHost and its wait: the DMA command is sent when
// the call starts; the copy out of CMA is the call itself, inside the
// wait.
func (t *traceDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	t0 := t.rec.stamp()
	if err := t.dev.Read(ctx, src, dst); err != nil {
		return err
	}
	t1 := t.rec.stamp()
	s := t.copySpec(profile.D2H, len(dst))
	if t.timer == nil {
		s.ExecCycles = t.hostCycles(t1 - t0)
	}
	s.StartCycles = t.run(s.ExecCycles)
	s.SrcPtr, s.DstPtr = uint64(src), hostPtr(dst)
	s.APINS = t0
	s.SubmitNS, s.ResponseNS, s.CmdDoneNS = t0, t0, t0
	s.CMANS, s.CMADurNS, s.CMADoneNS, s.DoneNS = t0, t1-t0, t1, t1
	s.Wait, s.WaitNS, s.WaitDurNS = true, t0, t1-t0
	t.rec.b.Copy(s)
	return nil
}

// LoadKernel is a loadCode and its wait the first time a name is loaded
// on the device; later loads of the name reuse its KernelId and record
// nothing (ggml-et loads each kernel once per process).
func (t *traceDevice) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	t0 := t.rec.stamp()
	k, err := t.dev.LoadKernel(ctx, name, elf)
	if err != nil {
		return k, err
	}
	t1 := t.rec.stamp()
	if kid, ok := t.byName[name]; ok {
		t.kern[k] = kid
		return k, nil
	}
	r := t.rec
	kid := r.nextKernel
	r.nextKernel++
	t.kern[k], t.byName[name] = kid, kid
	t.loaded = append(t.loaded, kid)
	r.kernels = append(r.kernels, kernelmap.Entry{Name: name, ID: kid})
	b := r.b
	if len(elf) > 0 {
		// One PT_LOAD segment copied by an internal memcpy (no API event).
		s := t.copySpec(profile.H2D, len(elf))
		if t.timer == nil {
			s.ExecCycles = t.hostCycles(t1 - t0)
		}
		s.Internal = true
		s.StartCycles = t.run(s.ExecCycles)
		s.CMANS, s.CMADurNS, s.CMADoneNS = t0, t1-t0, t1
		s.SubmitNS, s.ResponseNS, s.CmdDoneNS, s.DoneNS = t1, t1, t1, t1
		b.Copy(s)
	}
	l := b.NextID()
	b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassLoadCode, TimeNS: t0, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasID | profile.HasStream | profile.HasKernelID, DurationNS: t1 - t0,
		ID: l, Stream: t.stream, KernelID: kid})
	b.Emit(&profile.Event{Type: profile.TypeInstant, Class: profile.ClassDispatchEvent, TimeNS: t1, Thread: profile.CallbackThread,
		Has: profile.HasID, ID: l})
	b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassWaitForEvent, TimeNS: t1, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasID, ID: l})
	return k, nil
}

// Launch is a kernelLaunch. The command is sent when the call starts and
// its response is seen when the call returns (the reference device runs
// kernels inside Launch).
func (t *traceDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	t0 := t.rec.stamp()
	if err := t.dev.Launch(ctx, k, args, opts); err != nil {
		return err
	}
	t1 := t.rec.stamp()
	exec, timed := uint64(0), false
	if t.timer != nil {
		for _, lt := range t.timer.LaunchTimings(t.seen) {
			exec += lt.EndCycle - lt.StartCycle
			t.seen++
			timed = true
		}
	}
	if !timed {
		exec = t.hostCycles(t1 - t0)
	}
	kid, ok := t.kern[k]
	if !ok {
		kid = -1
	}
	b := t.rec.b
	b.Launch(profile.LaunchSpec{ID: b.NextID(), Device: t.id, Stream: t.stream, KernelID: kid, Threads: t.th,
		LaunchNS: t0, APIDurNS: t1 - t0, SubmitNS: t0, ResponseNS: t1, DispatchNS: t1,
		StartCycles: t.run(exec), ExecCycles: exec})
	return nil
}

// Sync is a waitForStream.
func (t *traceDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	t0 := t.rec.stamp()
	errs, err := t.dev.Sync(ctx)
	if err != nil {
		return errs, err
	}
	t1 := t.rec.stamp()
	t.rec.b.Emit(&profile.Event{Type: profile.TypeComplete, Class: profile.ClassWaitForStream, TimeNS: t0, Thread: profile.MainThread,
		Has: profile.HasDuration | profile.HasStream, DurationNS: t1 - t0, Stream: t.stream})
	return errs, nil
}

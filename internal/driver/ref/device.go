package ref

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops/abi"
)

// ErrClosed is returned by every call on a closed device.
var ErrClosed = errors.New("reference device is closed")

// Options configure a reference device.
type Options struct {
	// Manifest is the ABI (enum values, uberkernel ids, kernel → params
	// layout) the kernels are "built" against; nil means abi.Default().
	Manifest *abi.Manifest
	// MaxHostBytes caps the Go memory that touched allocations may hold;
	// 0 means no cap beyond the device memory size. Touching an allocation
	// past the cap fails (a Write error, or a stream error in a kernel).
	MaxHostBytes uint64
}

// Device is the reference device. It is safe for concurrent use; launches
// run one at a time, synchronously inside Launch, and their faults are
// kept for Sync.
type Device struct {
	mu      sync.Mutex
	m       *abi.Manifest
	props   driver.Props
	mem     *memory
	kernels []string // KernelID-1 → kernel name
	known   map[string]bool
	pending []driver.StreamError
	records launchLog
	decoded []abi.Decoded
	// params caches decoded params by kernel and params bytes: perf runs
	// launch the same params many times, and decoding them costs more
	// than a small kernel.
	params decodeCache
	// run is the launch in progress, kept to be reused by the next.
	run    run
	cycle  uint64
	closed bool
}

var _ driver.Device = (*Device)(nil)

// New returns a reference device with the fake device's properties
// (driver.FakeProps).
func New(opts Options) *Device {
	m := opts.Manifest
	if m == nil {
		m = abi.Default()
	}
	props := driver.FakeProps()
	known := map[string]bool{}
	for _, k := range m.Kernels() {
		known[k] = true
	}
	return &Device{
		m:     m,
		props: props,
		mem:   newMemory(props.DRAMBase, props.MemoryBytes, opts.MaxHostBytes),
		known: known,
	}
}

// Info describes the device: kind ref, index 0, the fake device's props.
func (d *Device) Info() driver.Info {
	return driver.Info{Kind: driver.KindRef, Index: 0, Name: "reference device", Props: d.props}
}

// Manifest is the ABI manifest the device decodes params with.
func (d *Device) Manifest() *abi.Manifest { return d.m }

// Malloc reserves size bytes of device memory aligned to align bytes
// (0 or anything below 64 means 64; it must be a power of two).
func (d *Device) Malloc(ctx context.Context, size, align uint64) (driver.DevPtr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	p, err := d.mem.malloc(size, align)
	return driver.DevPtr(p), err
}

// Free releases an allocation made by Malloc.
func (d *Device) Free(ctx context.Context, p driver.DevPtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if err := d.mem.freeBlock(uint64(p)); err != nil {
		return err
	}
	// Replays hold tensors of the allocations they were resolved with:
	// drop them all, so that the freed memory is not kept alive.
	d.params.dropReplays()
	return nil
}

// Write copies src to device memory at dst; the range must lie inside one
// live allocation.
func (d *Device) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if err := d.mem.write(uint64(dst), src); err != nil {
		return fmt.Errorf("write %d bytes at %#x: %w", len(src), uint64(dst), err)
	}
	return nil
}

// Read copies device memory at src into dst; the range must lie inside
// one live allocation.
func (d *Device) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if err := d.mem.read(uint64(src), dst); err != nil {
		return fmt.Errorf("read %d bytes at %#x: %w", len(dst), uint64(src), err)
	}
	return nil
}

// LoadKernel "loads" a kernel: the reference device knows every kernel
// of the manifest's kernel map by name and ignores elf. Each call returns
// a new id, as rt::IRuntime::loadCode does.
func (d *Device) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	if !d.known[name] {
		return 0, fmt.Errorf("kernel %s is not built into the reference device (ABI manifest %s)", name, d.m.GGMLCommit())
	}
	d.kernels = append(d.kernels, name)
	return driver.KernelID(len(d.kernels)), nil
}

// Launch runs a kernel on its params bytes, synchronously (the context
// is checked before the kernel starts, not while it runs). It fails only
// for a closed device, a cancelled context, an unknown kernel id or a
// shire mask the runtime would reject; a kernel that faults is reported by
// Sync, and its launch is recorded in Launches all the same. Barrier and
// FlushL3 change nothing: launches already run one after the other.
func (d *Device) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	return d.LaunchRepeat(ctx, k, args, opts, 1)
}

var _ driver.RepeatLauncher = (*Device)(nil)

// LaunchRepeat is n launches of a kernel on its params bytes
// (driver.RepeatLauncher), as n calls of Launch; the bytes are looked up
// once while they have a replay.
func (d *Device) LaunchRepeat(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if k == 0 || int(k) > len(d.kernels) {
		return fmt.Errorf("launch: kernel id %d was not loaded", k)
	}
	if err := checkShireMask(opts.ShireMask, d.props.ComputeShireMask); err != nil {
		return err
	}
	name := d.kernels[k-1]
	var e *cachedParams
	for range n {
		if e.liveReplay(d.mem.gen) == nil {
			e = d.params.lookup(name, args) // (a first launch makes the replay)
		}
		d.launch(name, args, e)
	}
	return nil
}

// launch is one launch of kernel name on args, whose cache entry is e
// (nil: none yet).
func (d *Device) launch(name string, args []byte, e *cachedParams) {
	start := d.cycle
	var err error
	if rp := e.liveReplay(d.mem.gen); rp != nil {
		// These bytes again: their resolved launch, without the run's
		// bookkeeping (a perf run's sub-µs launches are mostly that).
		err = rp.launch()
		if rp.cycles == 0 {
			rp.cycles = Cycles(d.props, rp.cost, 0)
		}
		d.cycle += rp.cycles
		d.keepDecoded(abi.Decoded{Kernel: name, Values: e.v})
		if !d.records.repeat(name, len(args), start, rp.cycles) {
			d.records.add(LaunchRecord{Kernel: name, ParamsSize: len(args), StartCycle: start, EndCycle: d.cycle})
		}
	} else {
		r := &d.run
		*r = run{mem: d.mem, m: d.m, params: &d.params, decoded: r.decoded[:0], rec: recorder{bufs: r.rec.bufs[:0]}}
		err = r.launch(name, args)
		d.cycle += Cycles(d.props, r.cost, len(r.insts))
		d.keepDecoded(r.decoded...)
		d.records.add(LaunchRecord{Kernel: name, ParamsSize: len(args), StartCycle: start, EndCycle: d.cycle, Insts: r.insts})
	}
	if err != nil {
		d.pending = append(d.pending, streamError(name, err))
	}
}

// checkShireMask applies the runtime's rule (KernelLaunch.cpp): at least
// one compute shire, none outside the device's 32-bit compute mask; bit 32
// (the master shire, which ggml-et passes) is let through. 0 means the
// whole compute mask.
func checkShireMask(mask uint64, compute uint32) error {
	if mask == 0 {
		return nil
	}
	low := uint32(mask)
	if mask>>33 != 0 || low&^compute != 0 {
		return fmt.Errorf("launch: shire mask %#x is not a subset of the compute shire mask %#x", mask, compute)
	}
	if low == 0 {
		return fmt.Errorf("launch: shire mask %#x selects no compute shire", mask)
	}
	return nil
}

func streamError(kernel string, err error) driver.StreamError {
	var f *fault
	if errors.As(err, &f) {
		return driver.StreamError{Code: f.code, Message: kernel + ": " + f.msg, Contexts: f.ctx}
	}
	return driver.StreamError{Code: CodeUserError, Message: kernel + ": " + err.Error(),
		Contexts: []driver.ErrorContext{kernelErrorContext()}}
}

// Sync returns, and forgets, the stream errors of the launches since the
// last Sync. Launches run synchronously, so there is nothing to wait for.
func (d *Device) Sync(ctx context.Context) ([]driver.StreamError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	errs := d.pending
	d.pending = nil
	return errs, nil
}

// maxDecoded bounds the decoded params kept for TakeDecoded (perf runs
// launch the same kernels many times and nobody takes them).
const maxDecoded = 1 << 14

// keepDecoded keeps ds for TakeDecoded, up to maxDecoded.
func (d *Device) keepDecoded(ds ...abi.Decoded) {
	if len(d.decoded) < maxDecoded {
		d.decoded = append(d.decoded, ds...)
	}
}

// TakeDecoded returns, and forgets, the params of every kernel run since
// the last call, as the device decoded them (one per instruction of an
// uberkernel launch): what a run checks against its plan.
func (d *Device) TakeDecoded() []abi.Decoded {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.decoded
	d.decoded = nil
	return out
}

// Launches returns every launch so far, in order, with its simulated
// device cycles.
func (d *Device) Launches() []LaunchRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.records.from(0)
}

// Close frees all device memory and kernels; every later call fails with
// ErrClosed.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	d.closed = true
	d.mem = nil
	d.params = decodeCache{}
	d.run = run{}
	d.kernels = nil
	d.pending = nil
	return nil
}

// launchLog holds every launch in order, as runs of launches that repeat
// the one before (same kernel, params size and cycles, starting where it
// ended, no uberkernel list), in chunks of a fixed size: a perf run
// launches the same kernel up to 100,000 times, and one record each
// (64 bytes, fresh memory the collector scans) cost a fifth of a 0.5 µs
// launch.
type launchLog struct {
	chunks [][]launchRun
	n      int
	last   *launchRun // the last run (nil: none yet)
}

// launchRun is n launches: rec, then each next one where the last ended.
type launchRun struct {
	rec   LaunchRecord
	first int // the log index of rec
	n     int
}

const launchChunk = 1024

// repeat adds a direct launch of kernel (size bytes of params) taking
// cycles from start if it repeats the last run, and reports whether it
// did (else add records it).
func (l *launchLog) repeat(kernel string, size int, start, cycles uint64) bool {
	r := l.last
	if r == nil || r.rec.Insts != nil || r.rec.EndCycle-r.rec.StartCycle != cycles ||
		start != r.rec.StartCycle+uint64(r.n)*cycles || r.rec.ParamsSize != size || r.rec.Kernel != kernel {
		return false
	}
	r.n++
	l.n++
	return true
}

func (l *launchLog) add(r LaunchRecord) {
	if r.Insts == nil && l.repeat(r.Kernel, r.ParamsSize, r.StartCycle, r.EndCycle-r.StartCycle) {
		return
	}
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == launchChunk {
		l.chunks = append(l.chunks, make([]launchRun, 0, launchChunk))
	}
	k := len(l.chunks) - 1
	l.chunks[k] = append(l.chunks[k], launchRun{rec: r, first: l.n, n: 1})
	l.last = &l.chunks[k][len(l.chunks[k])-1] // chunks never grow past their capacity
	l.n++
}

// from returns a copy of the records from the i-th on.
func (l *launchLog) from(i int) []LaunchRecord {
	i = max(i, 0)
	if i >= l.n {
		return nil
	}
	out := make([]LaunchRecord, 0, l.n-i)
	// The last chunk whose first run starts at or before i.
	c := sort.Search(len(l.chunks), func(c int) bool { return l.chunks[c][0].first > i }) - 1
	for ; c < len(l.chunks); c++ {
		for _, run := range l.chunks[c] {
			if run.first+run.n <= i {
				continue
			}
			d := run.rec.EndCycle - run.rec.StartCycle
			for k := max(0, i-run.first); k < run.n; k++ {
				r := run.rec
				r.StartCycle += uint64(k) * d
				r.EndCycle = r.StartCycle + d
				out = append(out, r)
			}
		}
	}
	return out
}

//go:build (etrt || etrtfake) && cgo

package etrt

/*
#cgo CFLAGS: -I${SRCDIR}/shim
#cgo CXXFLAGS: -I${SRCDIR}/shim -std=c++17
#cgo etrt,!etrtfake,etshimlib LDFLAGS: -letshim
#include <stdlib.h>
#include "etshim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/ainekko/et/internal/driver"
)

// Built reports whether this binary has a runtime shim (the etrt or
// etrtfake build tag, with cgo).
const Built = true

// maxPendingBytes bounds the C memory held by queued host-to-device copies
// before Write waits for the stream to drain them.
const maxPendingBytes = 1 << 30

// errBuf is the message buffer every shim call gets.
type errBuf [512]C.char

func (b *errBuf) ptr() *C.char  { return &b[0] }
func (b *errBuf) len() C.size_t { return C.size_t(len(b)) }

func (b *errBuf) err(op string, rc C.int) error {
	return statusError("etrt: "+op, int(rc), C.GoString(&b[0]))
}

// shimDevice is a driver.Device over the C shim. Calls are serialised.
// Host buffers handed to asynchronous copies and launches are C memory,
// kept until the stream has been waited for: cgo forbids C keeping Go
// pointers after a call returns.
type shimDevice struct {
	mu           sync.Mutex
	c            *C.et_ctx
	dev, st      C.int
	info         driver.Info
	pending      []unsafe.Pointer // C buffers the queued work still reads or writes
	pendingBytes uint64
	// maxPending is the bound on pendingBytes (0: maxPendingBytes).
	maxPending uint64
	// profPath is the trace a running profiler completes at StopProfile,
	// or "".
	profPath string
}

var (
	_ driver.Device   = (*shimDevice)(nil)
	_ driver.Profiler = (*shimDevice)(nil)
)

// Open opens a sysemu or PCIe device in this process, through the shim.
// On sysemu it can block forever (reference et-driver-and-sysemu.md §3.8):
// call it in a worker process (OpenWorker), never in et itself.
func Open(ctx context.Context, req OpenRequest) (driver.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		c    *C.et_ctx
		eb   errBuf
		rc   C.int
		kind driver.Kind
		dev  int
	)
	switch req.Backend {
	case string(driver.KindSysemu):
		kind = driver.KindSysemu
		rc = openSysemu(req.Sysemu, &c, &eb)
	case string(driver.KindPCIe):
		kind, dev = driver.KindPCIe, req.Index
		rc = C.et_open_pcie(&c, eb.ptr(), eb.len())
	default:
		return nil, fmt.Errorf("etrt: unknown backend %q (want sysemu or pcie)", req.Backend)
	}
	if rc != C.ET_OK {
		return nil, eb.err("open "+req.Backend, rc)
	}
	d := &shimDevice{c: c, dev: C.int(dev)}
	if err := d.init(kind, req.Index); err != nil {
		C.et_close(c)
		return nil, err
	}
	return d, nil
}

func openSysemu(cfg SysemuConfig, c **C.et_ctx, eb *errBuf) C.int {
	var strs []*C.char
	cstr := func(s string) *C.char {
		p := C.CString(s)
		strs = append(strs, p)
		return p
	}
	defer func() {
		for _, p := range strs {
			C.free(unsafe.Pointer(p))
		}
	}()
	var o C.et_sysemu_opts
	fw := make([]string, 5)
	copy(fw, cfg.Firmware)
	o.bootrom_elf = cstr(fw[0])
	o.bl2_elf = cstr(fw[1])
	o.machine_minion_elf = cstr(fw[2])
	o.master_minion_elf = cstr(fw[3])
	o.worker_minion_elf = cstr(fw[4])
	o.executable_path = cstr(cfg.Executable)
	o.run_dir = cstr(cfg.RunDir)
	o.log_file = cstr(cfg.LogFile)
	o.max_cycles = C.uint64_t(cfg.MaxCycles)
	o.shire_mask = C.uint64_t(cfg.ShireMask)
	o.memcheck = cbool(cfg.Memcheck)
	// The other checkers default to on in SysEmuOptions; ggml-et leaves
	// them on and turns only memcheck off (reference §7.5).
	o.l1_scp_check, o.l2_scp_check, o.flb_check, o.tstore_check = 1, 1, 1, 1
	if n := len(cfg.Extra); n > 0 {
		arr := unsafe.Slice((**C.char)(C.malloc(C.size_t(n)*C.size_t(unsafe.Sizeof((*C.char)(nil))))), n)
		defer C.free(unsafe.Pointer(&arr[0]))
		for i, s := range cfg.Extra {
			arr[i] = cstr(s)
		}
		o.extra_opts = &arr[0]
		o.n_extra_opts = C.int(n)
	}
	return C.et_open_sysemu(&o, c, eb.ptr(), eb.len())
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// init checks the device index, reads the properties and creates the
// stream.
func (d *shimDevice) init(kind driver.Kind, index int) error {
	var eb errBuf
	var n C.int
	if rc := C.et_device_count(d.c, &n, eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("device count", rc)
	}
	if int(d.dev) >= int(n) || d.dev < 0 {
		return fmt.Errorf("etrt: %s device %d: the runtime has %d device(s): %w", kind, d.dev, int(n), driver.ErrNoDevice)
	}
	var p C.et_props
	if rc := C.et_device_props(d.c, d.dev, &p, eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("device properties", rc)
	}
	name := fmt.Sprintf("et%d", index)
	if kind == driver.KindSysemu {
		name = fmt.Sprintf("sysemu%d", index)
	}
	d.info = driver.Info{Kind: kind, Index: index, Name: name, Props: propsFromC(&p)}
	if rc := C.et_stream_create(d.c, d.dev, &d.st, eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("create stream", rc)
	}
	return nil
}

func propsFromC(p *C.et_props) driver.Props {
	arch := driver.ArchName(int(p.arch))
	if arch == "" {
		arch = "unknown"
	}
	ff := map[int]string{0: "pcie", 1: "m2"}[int(p.form_factor)]
	return driver.Props{
		FrequencyMHz:        uint32(p.frequency_mhz),
		ComputeShireMask:    uint32(p.compute_shire_mask),
		AvailableShires:     uint32(p.available_shires),
		MemoryBytes:         uint64(p.memory_bytes),
		CacheLineBytes:      uint32(p.cache_line_bytes),
		L2Bytes:             uint64(p.l2_bytes),
		L3Bytes:             uint64(p.l3_bytes),
		ScratchpadBytes:     uint64(p.scratchpad_bytes),
		MemoryBandwidthMBps: uint32(p.memory_bandwidth_mbps),
		L2CacheBanks:        uint32(p.l2_cache_banks),
		SpareShireID:        uint32(p.spare_shire_id),
		Arch:                arch,
		FormFactor:          ff,
		TDPW:                uint32(p.tdp_w),
		DRAMBase:            uint64(p.dram_base),
	}
}

func (d *shimDevice) Info() driver.Info { return d.info }

func (d *shimDevice) Malloc(ctx context.Context, size, align uint64) (driver.DevPtr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return 0, errClosed
	}
	if align > math.MaxUint32 {
		return 0, fmt.Errorf("etrt: malloc: alignment %d too large", align)
	}
	var eb errBuf
	var p C.uint64_t
	if rc := C.et_malloc(d.c, d.dev, C.size_t(size), C.uint32_t(align), &p, eb.ptr(), eb.len()); rc != C.ET_OK {
		return 0, eb.err(fmt.Sprintf("malloc %d bytes", size), rc)
	}
	return driver.DevPtr(p), nil
}

func (d *shimDevice) Free(ctx context.Context, p driver.DevPtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	var eb errBuf
	if rc := C.et_free(d.c, d.dev, C.uint64_t(p), eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err(fmt.Sprintf("free 0x%x", uint64(p)), rc)
	}
	return nil
}

func (d *shimDevice) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	if len(src) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h := C.CBytes(src)
	var eb errBuf
	if rc := C.et_memcpy_h2d(d.c, d.st, h, C.uint64_t(dst), C.size_t(len(src)), 0, eb.ptr(), eb.len()); rc != C.ET_OK {
		C.free(h)
		return eb.err(fmt.Sprintf("write %d bytes at 0x%x", len(src), uint64(dst)), rc)
	}
	d.keep(h, uint64(len(src)))
	limit := d.maxPending
	if limit == 0 {
		limit = maxPendingBytes
	}
	if d.pendingBytes > limit {
		// The stream has drained: the copies it waited for are done with
		// their C buffers.
		if err := d.wait(ctx); err != nil {
			return err
		}
		d.release()
	}
	return nil
}

func (d *shimDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	if len(dst) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h := C.malloc(C.size_t(len(dst)))
	var eb errBuf
	if rc := C.et_memcpy_d2h(d.c, d.st, C.uint64_t(src), h, C.size_t(len(dst)), 1, eb.ptr(), eb.len()); rc != C.ET_OK {
		C.free(h)
		return eb.err(fmt.Sprintf("read %d bytes at 0x%x", len(dst), uint64(src)), rc)
	}
	d.keep(h, uint64(len(dst)))
	if err := d.wait(ctx); err != nil {
		return err
	}
	copy(dst, unsafe.Slice((*byte)(h), len(dst)))
	d.release()
	return nil
}

func (d *shimDevice) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return 0, errClosed
	}
	if len(elf) == 0 {
		return 0, fmt.Errorf("etrt: load %s: the runtime needs the kernel ELF", name)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h := C.CBytes(elf)
	var (
		eb   errBuf
		k    C.int
		addr C.uint64_t
	)
	rc := C.et_load_code(d.c, d.st, h, C.size_t(len(elf)), C.int64_t(timeoutSeconds(ctx)), &k, &addr, eb.ptr(), eb.len())
	if rc == C.ET_ERR_TIMEOUT {
		// The runtime may still read the ELF: leak it (the worker is
		// about to be killed).
		return 0, eb.err("load "+name, rc)
	}
	C.free(h)
	if rc != C.ET_OK {
		return 0, eb.err("load "+name, rc)
	}
	return driver.KernelID(uint32(k)), nil
}

func (d *shimDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var a unsafe.Pointer
	if len(args) > 0 {
		// Large arguments are copied by DMA from host memory: keep them
		// until the stream is waited for.
		a = C.CBytes(args)
	}
	var eb errBuf
	rc := C.et_launch(d.c, d.st, C.int(k), a, C.size_t(len(args)), C.uint64_t(opts.ShireMask),
		cbool(opts.Barrier), cbool(opts.FlushL3), eb.ptr(), eb.len())
	if rc != C.ET_OK {
		if a != nil {
			C.free(a)
		}
		return eb.err(fmt.Sprintf("launch kernel %d", k), rc)
	}
	if a != nil {
		d.keep(a, uint64(len(args)))
	}
	return nil
}

func (d *shimDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	d.release()
	var eb errBuf
	var n C.int
	if rc := C.et_stream_errors(d.c, d.st, &n, eb.ptr(), eb.len()); rc != C.ET_OK {
		return nil, eb.err("retrieve stream errors", rc)
	}
	var out []driver.StreamError
	for i := 0; i < int(n); i++ {
		var e C.et_stream_err
		if rc := C.et_stream_error(d.c, C.int(i), &e, nil, 0, eb.ptr(), eb.len()); rc != C.ET_OK {
			return nil, eb.err("stream error", rc)
		}
		raw := rawStreamError{
			Code: int(e.code), Name: C.GoString(&e.code_name[0]),
			HasMask: e.has_shire_mask != 0, ShireMask: uint64(e.cm_shire_mask),
			NumContexts: int(e.n_contexts),
		}
		if nc := int(e.n_contexts); nc > 0 {
			buf := (*C.et_hart_ctx)(C.calloc(C.size_t(nc), C.size_t(unsafe.Sizeof(C.et_hart_ctx{}))))
			rc := C.et_stream_error(d.c, C.int(i), &e, buf, C.int(nc), eb.ptr(), eb.len())
			if rc != C.ET_OK {
				C.free(unsafe.Pointer(buf))
				return nil, eb.err("stream error contexts", rc)
			}
			for _, h := range unsafe.Slice(buf, nc) {
				raw.Contexts = append(raw.Contexts, hartContext{
					Type: uint64(h._type), Cycle: uint64(h.cycle), HartID: uint64(h.hart_id),
					MEPC: uint64(h.mepc), MStatus: uint64(h.mstatus), MTVal: uint64(h.mtval),
					MCause: uint64(h.mcause), UserError: int64(h.user_error),
				})
			}
			C.free(unsafe.Pointer(buf))
		}
		out = append(out, decodeStreamError(raw))
	}
	return out, nil
}

func (d *shimDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return nil
	}
	var eb errBuf
	C.et_stream_destroy(d.c, d.st, eb.ptr(), eb.len())
	C.et_close(d.c) // frees the device memory and the runtime
	d.c = nil
	d.release()
	return nil
}

// StartProfile implements driver.Profiler: the runtime's profiler writes
// dir/et_runtime_trace.json as it runs, under the name driver.PartialTraceSuffix
// gives it until StopProfile completes it, so a run that dies leaves no
// file that looks complete (its partial trace is truncated, as a crashed
// ggml run's is).
func (d *shimDevice) StartProfile(ctx context.Context, dir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	if d.profPath != "" {
		return errors.New("etrt: start the profiler: it is already running")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	path := filepath.Join(dir, driver.ProfileTraceFile)
	cpath := C.CString(path + driver.PartialTraceSuffix)
	defer C.free(unsafe.Pointer(cpath))
	var eb errBuf
	if rc := C.et_profiler_start(d.c, cpath, eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("start the profiler", rc)
	}
	d.profPath = path
	return nil
}

// StopProfile implements driver.Profiler: it waits for the stream (so the
// responses and their device cycles are in the trace), stops the profiler
// and renames the trace to its final name.
func (d *shimDevice) StopProfile(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return errClosed
	}
	if d.profPath == "" {
		return nil
	}
	if err := d.wait(ctx); err != nil {
		return err
	}
	d.release()
	path := d.profPath
	d.profPath = ""
	var eb errBuf
	if rc := C.et_profiler_stop(d.c, eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("stop the profiler", rc)
	}
	if err := os.Rename(path+driver.PartialTraceSuffix, path); err != nil {
		return fmt.Errorf("etrt: stop the profiler: %w", err)
	}
	return nil
}

// keep records a C buffer the queued work uses.
func (d *shimDevice) keep(p unsafe.Pointer, n uint64) {
	d.pending = append(d.pending, p)
	d.pendingBytes += n
}

// release frees the C buffers of work the stream has finished.
func (d *shimDevice) release() {
	for _, p := range d.pending {
		C.free(p)
	}
	d.pending, d.pendingBytes = nil, 0
}

// wait waits for the stream, bounded by ctx's deadline. On a timeout the
// pending buffers are not freed: the runtime may still use them.
func (d *shimDevice) wait(ctx context.Context) error {
	var eb errBuf
	if rc := C.et_wait_stream(d.c, d.st, C.int64_t(timeoutSeconds(ctx)), eb.ptr(), eb.len()); rc != C.ET_OK {
		return eb.err("wait for stream", rc)
	}
	return nil
}

// timeoutSeconds is ctx's remaining time in whole seconds, rounded up, for
// the runtime's waits (which take std::chrono::seconds); a day without a
// deadline, like the runtime's default.
func timeoutSeconds(ctx context.Context) int64 {
	dl, ok := ctx.Deadline()
	if !ok {
		return 24 * 3600
	}
	s := int64(math.Ceil(time.Until(dl).Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// inactivityHints returns how many of the runtime's hintInactivity calls
// the shim passed on to the device layer (parking sys_emu) and how many it
// dropped because et was busy (et_inactivity_hints).
func (d *shimDevice) inactivityHints() (forwarded, dropped uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return 0, 0, errClosed
	}
	var eb errBuf
	var f, x C.uint64_t
	if rc := C.et_inactivity_hints(d.c, &f, &x, eb.ptr(), eb.len()); rc != C.ET_OK {
		return 0, 0, eb.err("inactivity hints", rc)
	}
	return uint64(f), uint64(x), nil
}

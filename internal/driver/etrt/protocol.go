package etrt

import (
	"context"
	"errors"

	"github.com/ainekko/et/internal/driver"
)

// OpenRequest says which device a worker opens. It is the first message
// of the worker protocol.
type OpenRequest struct {
	// Backend is "sysemu" or "pcie" (the shim), or any name the worker's
	// Opener knows ("ref" in et itself).
	Backend string
	// Index is the device index: the runtime's device for pcie, the name
	// for sysemu (one emulator per worker).
	Index int
	// Sysemu configures the emulator (Backend "sysemu").
	Sysemu SysemuConfig
}

// SysemuConfig is what the shim needs to boot the in-process emulator
// (emu::SysEmuOptions, reference et-driver-and-sysemu.md §3.1).
type SysemuConfig struct {
	// Firmware are the five firmware ELF paths in the order of
	// sysemu.FirmwareFiles (bootrom, BL2, MachineMinion, MasterMinion,
	// WorkerMinion).
	Firmware []string
	// Executable is bin/sys_emu (unused by the emulator library).
	Executable string
	// RunDir receives the UART logs.
	RunDir string
	// LogFile is the emulator log (sysemu.log).
	LogFile string
	// MaxCycles stops the emulator; 0 means no limit.
	MaxCycles uint64
	// ShireMask is the emulator's minion shire mask; 0 means 0x1FFFFFFFF
	// (a smaller mask never boots: reference §9).
	ShireMask uint64
	// Memcheck turns the coherency checker on (slow, and it aborts on
	// legal kernels: reference §9). Off by default, as in ggml-et.
	Memcheck bool
	// Extra are additional emulator options (--sysemu-opt).
	Extra []string
}

// Opener opens the device a worker serves.
type Opener func(ctx context.Context, req OpenRequest) (driver.Device, error)

// Operations of the protocol.
const (
	opOpen   = "open"
	opMalloc = "malloc"
	opFree   = "free"
	opWrite  = "write"
	opRead   = "read"
	opLoad   = "load"
	opLaunch = "launch"
	opSync   = "sync"
	opClose  = "close"
	// The runtime profiler (driver.Profiler).
	opProfileStart = "profile_start"
	opProfileStop  = "profile_stop"
)

// request is one call from the parent. Each is answered by one response,
// in order; there is one call in flight at a time.
type request struct {
	Op     string
	Open   OpenRequest
	Size   uint64 // malloc size, read length
	Align  uint64
	Ptr    uint64
	Data   []byte // write data, ELF, kernel args
	Name   string // kernel name
	Kernel uint32
	Launch driver.LaunchOptions
	Dir    string // profile directory (absolute: the worker runs elsewhere)
	// DeadlineUnixNano is the caller's deadline, 0 if none.
	DeadlineUnixNano int64
}

// response answers one request.
type response struct {
	Err          *wireError
	Info         driver.Info
	Ptr          uint64
	Kernel       uint32
	Data         []byte
	StreamErrors []driver.StreamError
}

// wireError carries an error across the pipe with enough type to keep the
// exit code: Kind names the driver sentinel it wraps.
type wireError struct {
	Kind string
	Msg  string
}

// Kinds of wireError, most specific first.
var wireKinds = []struct {
	kind string
	err  error
}{
	{"not_built", driver.ErrNotBuilt},
	{"driver_not_loaded", driver.ErrDriverNotLoaded},
	{"busy", driver.ErrDeviceBusy},
	{"resetting", driver.ErrResetting},
	{"no_device", driver.ErrNoDevice},
	{"unavailable", driver.ErrUnavailable},
	{"timeout", driver.ErrTimeout},
	{"deadline", context.DeadlineExceeded},
	{"canceled", context.Canceled},
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Msg: err.Error()}
	for _, k := range wireKinds {
		if errors.Is(err, k.err) {
			w.Kind = k.kind
			break
		}
	}
	if w.Kind == "" {
		var ie interface{ InputError() }
		if errors.As(err, &ie) {
			w.Kind = "input"
		}
	}
	return w
}

// remoteError is an error from the worker. It unwraps to the sentinel its
// kind names, so errors.Is and the exit codes work across the pipe.
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.is }

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	e := &remoteError{msg: w.Msg}
	for _, k := range wireKinds {
		if k.kind == w.Kind {
			e.is = k.err
		}
	}
	if w.Kind == "input" {
		return &remoteInputError{e}
	}
	return e
}

// remoteInputError is a malformed-input error from the worker (exit 2).
type remoteInputError struct{ *remoteError }

// InputError marks the error as malformed input.
func (e *remoteInputError) InputError() {}

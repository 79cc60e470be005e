package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Kind names a family of devices.
type Kind string

// The device kinds et knows.
const (
	KindRef    Kind = "ref"
	KindSysemu Kind = "sysemu"
	KindPCIe   Kind = "pcie"
)

// Kinds lists every kind in the order et reports them.
var Kinds = []Kind{KindPCIe, KindSysemu, KindRef}

// ParseKind checks a kind name given by a user.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown device kind %q (want pcie, sysemu or ref)", s)
}

// DevPtr is a device address.
type DevPtr uint64

// KernelID identifies a loaded kernel on one device.
type KernelID uint32

// Props are the fields of rt::DeviceProperties that et reports. A zero
// value means the fact is unknown and is omitted from output.
type Props struct {
	// FrequencyMHz is the minion boot frequency in MHz.
	FrequencyMHz uint32 `json:"frequency_mhz,omitempty"`
	// ComputeShireMask has bit i set when compute shire i is usable.
	ComputeShireMask uint32 `json:"compute_shire_mask,omitempty"`
	// AvailableShires is the popcount of ComputeShireMask.
	AvailableShires uint32 `json:"available_shires,omitempty"`
	// MemoryBytes is the host-managed DRAM region in bytes (what ggml uses as total memory).
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// CacheLineBytes is the cache line size in bytes, also the buffer alignment.
	CacheLineBytes uint32 `json:"cache_line_bytes,omitempty"`
	// L2Bytes, L3Bytes and ScratchpadBytes are the chip totals in bytes.
	L2Bytes         uint64 `json:"l2_bytes,omitempty"`
	L3Bytes         uint64 `json:"l3_bytes,omitempty"`
	ScratchpadBytes uint64 `json:"scratchpad_bytes,omitempty"`
	// MemoryBandwidthMBps is the DDR bandwidth in MB/s.
	MemoryBandwidthMBps uint32 `json:"memory_bandwidth_mbps,omitempty"`
	// L2CacheBanks is the number of L2 cache banks per shire.
	L2CacheBanks uint32 `json:"l2_cache_banks,omitempty"`
	// SpareShireID is the spare compute minion shire id (the master shire, 32).
	SpareShireID uint32 `json:"spare_shire_id,omitempty"`
	// Arch is etsoc1, pantero or gepardo.
	Arch string `json:"arch,omitempty"`
	// FormFactor is pcie or m2.
	FormFactor string `json:"form_factor,omitempty"`
	// TDPW is the thermal design power in watts.
	TDPW uint32 `json:"tdp_w,omitempty"`
	// DRAMBase is the device address where host-managed DRAM starts.
	DRAMBase uint64 `json:"dram_base,omitempty"`
}

// archNames are the ET architectures by the value of their enum, the
// same in the driver's arch_rev (DevConfig), the runtime's
// DeviceProperties::arch and a trace's device_arch_rev.
var archNames = []string{"etsoc1", "pantero", "gepardo"}

// ArchName is the name of an ET architecture enum value (Props.Arch): ""
// for a value et does not know.
func ArchName(v int) string {
	if v < 0 || v >= len(archNames) {
		return ""
	}
	return archNames[v]
}

// ArchValue is the enum value of an architecture name (ArchName's
// inverse): -1 for a name et does not know.
func ArchValue(name string) int {
	for v, n := range archNames {
		if n == name {
			return v
		}
	}
	return -1
}

// FakeProps are the properties of the runtime's DeviceLayerFake (and, for
// everything but the shire mask and DRAM, of sys_emu): reference
// et-driver-and-sysemu.md §2.
func FakeProps() Props {
	return Props{
		FrequencyMHz:        1000,
		ComputeShireMask:    0xFFFFFFFF,
		AvailableShires:     32,
		MemoryBytes:         1 << 35,
		CacheLineBytes:      64,
		L2Bytes:             16384 << 10,
		L3Bytes:             32768 << 10,
		ScratchpadBytes:     81920 << 10,
		MemoryBandwidthMBps: 128000,
		L2CacheBanks:        4,
		SpareShireID:        32,
		Arch:                "etsoc1",
		FormFactor:          "pcie",
		TDPW:                25,
		DRAMBase:            0x8000,
	}
}

// Info describes one device.
type Info struct {
	Kind  Kind
	Index int
	Name  string
	Props Props
}

// LaunchOptions are the per-launch knobs of rt::IRuntime::kernelLaunch.
type LaunchOptions struct {
	// ShireMask selects the compute shires; 0 means the device's whole mask.
	ShireMask uint64
	// Barrier waits for earlier commands on the stream before starting.
	Barrier bool
	// FlushL3 flushes L3 after the kernel.
	FlushL3 bool
}

// ErrorContext is one hart's error context from a failed kernel.
type ErrorContext struct {
	Hart  uint32 `json:"hart"`
	Cause uint64 `json:"cause"`
	EPC   uint64 `json:"epc"`
	TVal  uint64 `json:"tval"`
	// Detail is a decoded description of Cause when known.
	Detail string `json:"detail,omitempty"`
	// Kind is the context's type (rt::ErrorContext::type_: "U-mode
	// exception", "kernel execution error", ...), when the device says.
	Kind string `json:"kind,omitempty"`
	// UserError is the code a kernel returned (a kernel execution error):
	// meaningful only when HasUserError is set.
	UserError    int64 `json:"user_error,omitempty"`
	HasUserError bool  `json:"-"`
	// Unfilled lists, comma-separated, the registers the device left
	// unfilled for this kind of context ("cause,epc,tval"): their fields
	// above are 0 and are not data.
	Unfilled string `json:"unfilled,omitempty"`
}

// Filled reports whether register reg ("cause", "epc", "tval") holds data.
func (c ErrorContext) Filled(reg string) bool {
	for u := range strings.SplitSeq(c.Unfilled, ",") {
		if u == reg {
			return false
		}
	}
	return true
}

// StreamError is an error the device reported for a stream.
type StreamError struct {
	// Code is the decoded DeviceErrorCode name.
	Code     string         `json:"code"`
	Message  string         `json:"message,omitempty"`
	Contexts []ErrorContext `json:"contexts,omitempty"`
}

func (e StreamError) Error() string {
	if e.Message != "" {
		return e.Code + ": " + e.Message
	}
	return e.Code
}

// Device is one ET device as the tools see it.
type Device interface {
	Info() Info
	Malloc(ctx context.Context, size, align uint64) (DevPtr, error)
	Free(ctx context.Context, p DevPtr) error
	Write(ctx context.Context, dst DevPtr, src []byte) error
	Read(ctx context.Context, src DevPtr, dst []byte) error
	// LoadKernel loads a kernel ELF; the reference device needs only the name.
	LoadKernel(ctx context.Context, name string, elf []byte) (KernelID, error)
	Launch(ctx context.Context, k KernelID, args []byte, opts LaunchOptions) error
	// Sync waits for all launched work and returns the stream errors it produced.
	Sync(ctx context.Context) ([]StreamError, error)
	Close() error
}

// A RepeatLauncher is a Device that launches one kernel on one params
// blob many times in one call: a perf run's batch of a sub-µs launch
// (the reference device), where finding the params and taking the
// device's lock again for each would cost more than its kernel.
type RepeatLauncher interface {
	// LaunchRepeat is n calls of Launch(ctx, k, args, opts), each
	// launch recorded and faulting as its own; the context, kernel id
	// and options are checked once, before the first.
	LaunchRepeat(ctx context.Context, k KernelID, args []byte, opts LaunchOptions, n int) error
}

// Typed errors returned at the hardware boundary. Each is, via errors.Is,
// also ErrUnavailable, except ErrTimeout.
var (
	// ErrUnavailable: the backend, device or install is absent, busy or not built.
	ErrUnavailable = errors.New("unavailable")
	// ErrNotBuilt: this binary lacks the etrt build tag.
	ErrNotBuilt = unavailable("backend not built into this binary (build with -tags etrt, see docs/etrt.md)")
	// ErrDriverNotLoaded: the ET kernel driver is not bound to the device.
	ErrDriverNotLoaded = unavailable("ET kernel driver not loaded")
	// ErrDeviceBusy: another process holds the device node (EBUSY).
	ErrDeviceBusy = unavailable("device in use by another process")
	// ErrResetting: the device is resetting (EPERM on open).
	ErrResetting = unavailable("device is resetting")
	// ErrNoDevice: the requested device does not exist.
	ErrNoDevice = unavailable("no such device")
	// ErrTimeout: a watchdog fired.
	ErrTimeout = errors.New("timed out")
)

type unavailableError struct{ msg string }

func unavailable(msg string) error               { return &unavailableError{msg} }
func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

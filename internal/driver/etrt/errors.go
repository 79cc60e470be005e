package etrt

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ainekko/et/internal/driver"
)

// Status codes of the shim ABI (shim/etshim.h).
const (
	statusOK          = 0
	statusErr         = 1
	statusTimeout     = 2
	statusArg         = 3
	statusUnavailable = 4
)

// statusError turns a shim status code and message into an error: nil for
// statusOK, driver.ErrTimeout and driver.ErrUnavailable for those codes.
// An empty message from the runtime is a sys_emu FATAL error, whose text
// only sysemu.log has (reference et-driver-and-sysemu.md §3.8).
func statusError(op string, code int, msg string) error {
	if code == statusOK {
		return nil
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "the runtime failed with an empty message (an emulator FATAL error: see sysemu.log in the run directory)"
	}
	switch code {
	case statusTimeout:
		return fmt.Errorf("%s: %s: %w", op, msg, driver.ErrTimeout)
	case statusUnavailable:
		return fmt.Errorf("%s: %s: %w", op, msg, driver.ErrUnavailable)
	case statusArg:
		return fmt.Errorf("%s: bad argument: %s", op, msg)
	}
	return fmt.Errorf("%s: %s", op, msg)
}

// deviceErrorCodes are the names of rt::DeviceErrorCode, in enum order
// (reference §5.1, et-platform f5e7904).
var deviceErrorCodes = []string{
	"KernelLaunchUnexpectedError", "KernelLaunchException", "KernelLaunchShiresNotReady",
	"KernelLaunchHostAborted", "KernelLaunchInvalidAddress", "KernelLaunchTimeoutHang",
	"KernelLaunchInvalidArgsPayloadSize", "KernelLaunchCmIfaceMulticastFailed",
	"KernelLaunchCmIfaceUnicastFailed", "KernelLaunchSpIfaceResetFailed",
	"KernelLaunchCwMinionsBootFailed", "KernelLaunchInvalidArgsInvalidShireMask",
	"KernelLaunchResponseUserError",
	"KernelAbortError", "KernelAbortInvalidTagId", "KernelAbortTimeoutHang", "KernelAbortHostAborted",
	"AbortUnexpectedError", "AbortInvalidTagId",
	"DmaUnexpectedError", "DmaHostAborted", "DmaErrorAborted", "DmaInvalidAddress", "DmaInvalidSize",
	"DmaCmIfaceMulticastFailed", "DmaDriverDataConfigFailed", "DmaDriverLinkConfigFailed",
	"DmaDriverChanStartFailed", "DmaDriverAbortFailed",
	"TraceConfigUnexpectedError", "TraceConfigBadShireMask", "TraceConfigBadThreadMask",
	"TraceConfigBadEventMask", "TraceConfigBadFilterMask", "TraceConfigHostAborted",
	"TraceConfigCmFailed", "TraceConfigMmFailed", "TraceConfigInvalidConfig",
	"TraceControlUnexpectedError", "TraceControlBadRtType", "TraceControlBadControlMask",
	"TraceControlComputeMinionRtCtrlError", "TraceControlMasterMinionRtCtrlError",
	"TraceControlHostAborted", "TraceControlCmIfaceMulticastFailed",
	"ApiCompatibilityUnexpectedError", "ApiCompatibilityIncompatibleMajor",
	"ApiCompatibilityIncompatibleMinor", "ApiCompatibilityIncompatiblePatch",
	"ApiCompatibilityBadFirmwareType", "ApiCompatibilityHostAborted",
	"FirmwareVersionUnexpectedError", "FirmwareVersionBadFwType", "FirmwareVersionNotAvailable",
	"FirmwareVersionHostAborted",
	"EchoHostAborted",
	"CmResetUnexpectedError", "CmResetInvalidShireMask", "CmResetFailed",
	"ErrorTypeUnsupportedCommand", "ErrorTypeCmSmodeRtException", "ErrorTypeCmSmodeRtHang",
	"Unknown",
}

// DeviceErrorCodeName names an rt::DeviceErrorCode value.
func DeviceErrorCodeName(code int) string {
	if code >= 0 && code < len(deviceErrorCodes) {
		return deviceErrorCodes[code]
	}
	return fmt.Sprintf("DeviceErrorCode(%d)", code)
}

// contextTypes name rt::ErrorContext::type_ (reference §5.1).
var contextTypes = []string{
	"compute hang", "U-mode exception", "system abort", "self abort",
	"kernel execution error", "tensor error", "bus error",
}

// mcauses name the RISC-V exception causes (mcause with the interrupt bit
// clear).
var mcauses = map[uint64]string{
	0: "instruction address misaligned", 1: "instruction access fault", 2: "illegal instruction",
	3: "breakpoint", 4: "load address misaligned", 5: "load access fault",
	6: "store/AMO address misaligned", 7: "store/AMO access fault", 8: "ecall from U-mode",
	9: "ecall from S-mode", 11: "ecall from M-mode", 12: "instruction page fault",
	13: "load page fault", 15: "store/AMO page fault",
}

// CauseName describes a RISC-V mcause value.
func CauseName(mcause uint64) string {
	if mcause>>63 == 1 {
		return fmt.Sprintf("interrupt %d", mcause&^(1<<63))
	}
	if s, ok := mcauses[mcause]; ok {
		return s
	}
	return fmt.Sprintf("cause %d", mcause)
}

// hartContext is one rt::ErrorContext as the shim reports it.
type hartContext struct {
	Type, Cycle, HartID, MEPC, MStatus, MTVal, MCause uint64
	UserError                                         int64
}

// rawStreamError is one rt::StreamError as the shim reports it.
type rawStreamError struct {
	Code        int
	Name        string // std::to_string of the code; "" from the fake
	HasMask     bool
	ShireMask   uint64
	NumContexts int // how many contexts the error has (Contexts may hold fewer)
	Contexts    []hartContext
}

// unfilledWord is the runtime's fill pattern of an error context it did
// not write (0xCD bytes, reference §9).
const unfilledWord = 0xCDCDCDCDCDCDCDCD

// Context types (rt::ErrorContext::type_) with their own decoding.
const (
	ctxUException  = 1
	ctxKernelError = 4
	ctxTensorError = 5
)

// hasUserError reports whether the context carries the kernel's
// userDefinedError: a kernel (tensor) execution error that filled it.
func (h hartContext) hasUserError() bool {
	return (h.Type == ctxKernelError || h.Type == ctxTensorError) && uint64(h.UserError) != unfilledWord
}

// unfilled lists the registers the runtime leaves unfilled for this type
// of context: a kernel execution error fills only userDefinedError
// (reference §9, seen on the real stack with error.elf), and any register
// still holding the 0xCD pattern (bus_error.elf fills none) was not
// written.
func (h hartContext) unfilled() []string {
	var out []string
	for _, r := range []struct {
		name string
		v    uint64
	}{{"cause", h.MCause}, {"epc", h.MEPC}, {"tval", h.MTVal}} {
		if h.Type == ctxKernelError || h.Type == ctxTensorError || r.v == unfilledWord {
			out = append(out, r.name)
		}
	}
	return out
}

// detail describes one hart's context.
func (h hartContext) detail() string {
	switch {
	case h.Type == ctxUException && h.MCause != unfilledWord:
		return "U-mode exception: " + CauseName(h.MCause)
	case h.hasUserError():
		return fmt.Sprintf("%s (user error %d)", contextTypes[h.Type], h.UserError)
	}
	return contextTypes[h.Type]
}

// decodeStreamError turns a shim stream error into a driver.StreamError:
// the DeviceErrorCode name, one ErrorContext per filled hart context
// (contexts whose type is not a known one, such as the runtime's 0xCD fill
// pattern, are skipped and counted), and a message summarising the
// contexts per kind, since a kernel error can carry one per hart (2080).
func decodeStreamError(r rawStreamError) driver.StreamError {
	name := r.Name
	if name == "" {
		name = DeviceErrorCodeName(r.Code)
	}
	out := driver.StreamError{Code: name}
	counts := map[string]int{}
	skipped := 0
	for _, h := range r.Contexts {
		if h.Type >= uint64(len(contextTypes)) {
			skipped++
			continue
		}
		d := h.detail()
		counts[d]++
		c := driver.ErrorContext{
			Hart: uint32(h.HartID), Cause: h.MCause, EPC: h.MEPC, TVal: h.MTVal, Detail: d,
			Kind: contextTypes[h.Type], Unfilled: strings.Join(h.unfilled(), ","),
		}
		for _, u := range h.unfilled() {
			switch u {
			case "cause":
				c.Cause = 0
			case "epc":
				c.EPC = 0
			case "tval":
				c.TVal = 0
			}
		}
		if h.hasUserError() {
			c.UserError, c.HasUserError = h.UserError, true
		}
		out.Contexts = append(out.Contexts, c)
	}
	var parts []string
	if len(out.Contexts) > 0 {
		kinds := make([]string, 0, len(counts))
		for k := range counts {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			if counts[kinds[i]] != counts[kinds[j]] {
				return counts[kinds[i]] > counts[kinds[j]]
			}
			return kinds[i] < kinds[j]
		})
		for i, k := range kinds {
			kinds[i] = fmt.Sprintf("%s x%d", k, counts[k])
		}
		parts = append(parts, fmt.Sprintf("%d hart(s): %s", len(out.Contexts), strings.Join(kinds, ", ")))
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d unfilled context(s) skipped", skipped))
	}
	if missing := r.NumContexts - len(r.Contexts); missing > 0 {
		parts = append(parts, fmt.Sprintf("%d context(s) not retrieved", missing))
	}
	if r.HasMask {
		parts = append(parts, fmt.Sprintf("compute shire mask 0x%x", r.ShireMask))
	}
	out.Message = strings.Join(parts, "; ")
	return out
}

// errClosed is returned by calls on a closed device.
var errClosed = errors.New("device is closed")

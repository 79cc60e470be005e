package etrt

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

func TestStatusError(t *testing.T) {
	tests := []struct {
		name        string
		code        int
		msg         string
		want        string
		timeout     bool
		unavailable bool
	}{
		{name: "ok", code: statusOK},
		{name: "plain", code: statusErr, msg: "boom", want: "op: boom"},
		{name: "empty message", code: statusErr, msg: "", want: "op: the runtime failed with an empty message (an emulator FATAL error: see sysemu.log in the run directory)"},
		{name: "timeout", code: statusTimeout, msg: "waitForStream did not finish within 3 s", want: "op: waitForStream did not finish within 3 s: timed out", timeout: true},
		{name: "unavailable", code: statusUnavailable, msg: "no device", want: "op: no device: unavailable", unavailable: true},
		{name: "argument", code: statusArg, msg: "NULL", want: "op: bad argument: NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := statusError("op", tt.code, tt.msg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if got := errors.Is(err, driver.ErrTimeout); got != tt.timeout {
				t.Errorf("Is(ErrTimeout) = %v, want %v", got, tt.timeout)
			}
			if got := errors.Is(err, driver.ErrUnavailable); got != tt.unavailable {
				t.Errorf("Is(ErrUnavailable) = %v, want %v", got, tt.unavailable)
			}
		})
	}
}

func TestDeviceErrorCodeName(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{0, "KernelLaunchUnexpectedError"},
		{1, "KernelLaunchException"},
		{12, "KernelLaunchResponseUserError"},
		{13, "KernelAbortError"},
		{19, "DmaUnexpectedError"},
		{55, "EchoHostAborted"},
		{61, "ErrorTypeCmSmodeRtHang"},
		{62, "Unknown"},
		{63, "DeviceErrorCode(63)"},
		{-1, "DeviceErrorCode(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := DeviceErrorCodeName(tt.code); got != tt.want {
				t.Errorf("DeviceErrorCodeName(%d) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}

func TestDecodeStreamError(t *testing.T) {
	// The shape observed on sysemu for a kernel returning -1 (reference
	// §9): 2048 type-4 contexts, then 32 left at the 0xCD fill pattern.
	var kernelErr []hartContext
	for h := 0; h < 2048; h++ {
		kernelErr = append(kernelErr, hartContext{Type: 4, HartID: uint64(h), UserError: -1})
	}
	for h := 0; h < 32; h++ {
		kernelErr = append(kernelErr, hartContext{Type: 0xCDCDCDCDCDCDCDCD, HartID: 0xCDCDCDCDCDCDCDCD})
	}
	tests := []struct {
		name      string
		raw       rawStreamError
		code      string
		message   string
		contexts  int
		firstHart uint32
		detail    string
	}{
		{
			name: "kernel returned -1", contexts: 2048, detail: "kernel execution error (user error -1)",
			raw:     rawStreamError{Code: 0, HasMask: true, ShireMask: 0, NumContexts: 2080, Contexts: kernelErr},
			code:    "KernelLaunchUnexpectedError",
			message: "2048 hart(s): kernel execution error (user error -1) x2048; 32 unfilled context(s) skipped; compute shire mask 0x0",
		},
		{
			name: "exceptions", contexts: 2, firstHart: 7, detail: "U-mode exception: load access fault",
			raw: rawStreamError{Code: 1, Name: "KernelLaunchException", NumContexts: 3, Contexts: []hartContext{
				{Type: 1, HartID: 7, MCause: 5, MEPC: 0x10, MTVal: 0x20},
				{Type: 1, HartID: 8, MCause: 15},
			}},
			code:    "KernelLaunchException",
			message: "2 hart(s): U-mode exception: load access fault x1, U-mode exception: store/AMO page fault x1; 1 context(s) not retrieved",
		},
		{
			name: "no contexts", raw: rawStreamError{Code: 22}, code: "DmaInvalidAddress",
		},
		{
			name: "shim name wins", raw: rawStreamError{Code: 1, Name: "SomethingNewer"}, code: "SomethingNewer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeStreamError(tt.raw)
			if got.Code != tt.code {
				t.Errorf("Code = %q, want %q", got.Code, tt.code)
			}
			if got.Message != tt.message {
				t.Errorf("Message = %q, want %q", got.Message, tt.message)
			}
			if len(got.Contexts) != tt.contexts {
				t.Fatalf("%d contexts, want %d", len(got.Contexts), tt.contexts)
			}
			if tt.contexts > 0 {
				c := got.Contexts[0]
				if c.Hart != tt.firstHart || c.Detail != tt.detail {
					t.Errorf("first context = %+v, want hart %d, detail %q", c, tt.firstHart, tt.detail)
				}
			}
		})
	}
}

// Each context type is decoded with the registers the runtime fills for
// it, as seen on the real stack: error.elf (type 4) fills only the user
// error, bus_error.elf (type 6) nothing, abort.elf (type 3) mcause and mepc,
// exception.elf (type 1) all three.
func TestDecodeContextsPerType(t *testing.T) {
	const cd = 0xCDCDCDCDCDCDCDCD
	raw := rawStreamError{Code: 0, NumContexts: 5, Contexts: []hartContext{
		{Type: 4, HartID: 2, MCause: cd, MEPC: cd, MTVal: cd, UserError: -10},
		{Type: 6, HartID: 3, MCause: cd, MEPC: cd, MTVal: cd, UserError: -3617008641903833651},
		{Type: 3, HartID: 4, MCause: 8, MEPC: 0x8005b3602e, MTVal: 0, UserError: -3617008641903833651},
		{Type: 1, HartID: 5, MCause: 7, MEPC: 0x8005b36016, MTVal: 0},
		{Type: 1, HartID: 6, MCause: cd, MEPC: 0x10, MTVal: cd},
	}}
	want := []driver.ErrorContext{
		{Hart: 2, Detail: "kernel execution error (user error -10)", Kind: "kernel execution error", UserError: -10, HasUserError: true, Unfilled: "cause,epc,tval"},
		{Hart: 3, Detail: "bus error", Kind: "bus error", Unfilled: "cause,epc,tval"},
		{Hart: 4, Cause: 8, EPC: 0x8005b3602e, Detail: "self abort", Kind: "self abort"},
		{Hart: 5, Cause: 7, EPC: 0x8005b36016, Detail: "U-mode exception: store/AMO access fault", Kind: "U-mode exception"},
		{Hart: 6, EPC: 0x10, Detail: "U-mode exception", Kind: "U-mode exception", Unfilled: "cause,tval"},
	}
	got := decodeStreamError(raw)
	if len(got.Contexts) != len(want) {
		t.Fatalf("contexts %+v", got.Contexts)
	}
	for i, w := range want {
		if got.Contexts[i] != w {
			t.Errorf("context %d = %+v, want %+v", i, got.Contexts[i], w)
		}
	}
	if !got.Contexts[3].Filled("tval") || got.Contexts[0].Filled("epc") || got.Contexts[4].Filled("cause") || !got.Contexts[4].Filled("epc") {
		t.Error("Filled disagrees with Unfilled")
	}
}

func TestCauseName(t *testing.T) {
	for cause, want := range map[uint64]string{
		2: "illegal instruction", 13: "load page fault", 10: "cause 10", 1<<63 | 7: "interrupt 7",
	} {
		if got := CauseName(cause); got != want {
			t.Errorf("CauseName(%#x) = %q, want %q", cause, got, want)
		}
	}
}

func TestWireErrorKinds(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		is    []error
		input bool
	}{
		{name: "not built", err: driver.ErrNotBuilt, is: []error{driver.ErrNotBuilt, driver.ErrUnavailable}},
		{name: "busy", err: errors.Join(errors.New("open /dev/et0_ops"), driver.ErrDeviceBusy), is: []error{driver.ErrDeviceBusy, driver.ErrUnavailable}},
		{name: "timeout", err: statusError("wait", statusTimeout, "x"), is: []error{driver.ErrTimeout}},
		{name: "canceled", err: context.Canceled, is: []error{context.Canceled}},
		{name: "input", err: inputErr{"bad params"}, input: true},
		{name: "plain", err: errors.New("plain")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toWire(tt.err).err()
			if got.Error() != tt.err.Error() {
				t.Errorf("message %q, want %q", got, tt.err)
			}
			for _, target := range tt.is {
				if !errors.Is(got, target) {
					t.Errorf("errors.Is(%v, %v) = false", got, target)
				}
			}
			if !errors.Is(tt.err, driver.ErrUnavailable) && errors.Is(got, driver.ErrUnavailable) {
				t.Errorf("%v became unavailable", got)
			}
			var ie interface{ InputError() }
			if errors.As(got, &ie) != tt.input {
				t.Errorf("input error = %v, want %v", !tt.input, tt.input)
			}
		})
	}
	if toWire(nil) != nil || (*wireError)(nil).err() != nil {
		t.Error("nil errors must stay nil")
	}
	if !strings.Contains(driver.ErrNotBuilt.Error(), "etrt") {
		t.Error("ErrNotBuilt should name the build tag")
	}
}

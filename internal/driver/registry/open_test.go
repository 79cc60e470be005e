package registry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
)

func TestOpenRef(t *testing.T) {
	kept := ""
	h, err := Open(context.Background(), Spec{Backend: "ref", Host: Host{Kept: func(_, dir string) { kept = dir }}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Device.Info().Kind != driver.KindRef || h.RunDir != "" || h.Temp {
		t.Errorf("handle %+v, info %+v", h, h.Device.Info())
	}
	if h.Close(nil); kept != "" {
		t.Errorf("kept %q", kept)
	}
	if _, err := Open(context.Background(), Spec{Backend: "ref", Index: 1}); !errors.Is(err, driver.ErrNoDevice) {
		t.Errorf("ref 1: %v, want ErrNoDevice", err)
	}
	if _, err := Open(context.Background(), Spec{Backend: "gpu"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Errorf("gpu: %v", err)
	}
}

func TestNativeAvailable(t *testing.T) {
	for _, b := range Backends {
		native := b == "sysemu" || b == "pcie"
		if Native(b) != native {
			t.Errorf("Native(%s) = %v", b, Native(b))
		}
		err := Available(b)
		if want := native && !etrt.Built; (err != nil) != want || (err != nil && !errors.Is(err, driver.ErrNotBuilt)) {
			t.Errorf("Available(%s) = %v (built %v)", b, err, etrt.Built)
		}
	}
	d, err := openInProcess(context.Background(), etrt.OpenRequest{Backend: "ref"})
	if err != nil || d.Info().Kind != driver.KindRef {
		t.Fatalf("in process ref: %v", err)
	}
	d.Close()
}

// --timeout is for device work: the sysemu and pcie workers count their
// calls themselves, so run-op and run-kernel give them no deadline (input
// preparation must not count); only the in-process reference device gets
// one, from the moment the device work starts.
func TestBackendWithTimeout(t *testing.T) {
	for _, tt := range []struct {
		backend  string
		timeout  time.Duration
		deadline bool
	}{
		{"sysemu", time.Minute, false},
		{"pcie", time.Minute, false},
		{"ref", time.Minute, true},
		{"ref", 0, false},
	} {
		ctx, cancel := WithTimeout(context.Background(), tt.backend, tt.timeout, "run-op")
		// The reference device's clock is a budget (it stops for host
		// work, HostWork), not a deadline: its ctx can end on its own.
		if got := ctx.Done() != nil; got != tt.deadline {
			t.Errorf("%s --timeout %s: ctx ends on its own %v, want %v", tt.backend, tt.timeout, got, tt.deadline)
		}
		cancel()
		if tt.deadline && !errors.Is(context.Cause(ctx), context.Canceled) {
			t.Errorf("%s: cause after cancel %v", tt.backend, context.Cause(ctx))
		}
	}
	ctx, cancel := WithTimeout(context.Background(), "ref", time.Nanosecond, "run-op")
	defer cancel()
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, driver.ErrTimeout) || cause.Error() != "run-op: "+driver.ErrTimeout.Error()+" after 1ns" {
		t.Errorf("cause %v", cause)
	}
}

// --timeout on the reference device does not count host work: the clock
// stops while HostWork runs, and runs out afterwards (issue 33: input
// generation made run-op exit 4).
func TestTimeoutSkipsHostWork(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), "ref", 300*time.Millisecond, "run-op")
	defer cancel()
	done := HostWork(ctx)
	inner := HostWork(ctx) // a second job's host work, at once
	time.Sleep(600 * time.Millisecond)
	inner()
	if err := ctx.Err(); err != nil {
		t.Fatalf("timed out during host work: %v", context.Cause(ctx))
	}
	done()
	done() // idempotent
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), driver.ErrTimeout) || !strings.Contains(context.Cause(ctx).Error(), "run-op") {
		t.Errorf("cause %v", context.Cause(ctx))
	}
	// Native backends count device calls in the worker: ctx is unchanged.
	if c, _ := WithTimeout(context.Background(), "sysemu", time.Nanosecond, "x"); c != context.Background() {
		t.Error("sysemu ctx changed")
	}
}

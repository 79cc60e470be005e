package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
)

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
		b := backendOptions{Backend: tt.backend, Timeout: tt.timeout}
		ctx, cancel := b.withTimeout(context.Background(), "run-op")
		dl, ok := ctx.Deadline()
		if ok != tt.deadline {
			t.Errorf("%s --timeout %s: deadline %v %v, want one: %v", tt.backend, tt.timeout, dl, ok, tt.deadline)
		}
		cancel()
		if tt.deadline && !errors.Is(context.Cause(ctx), context.Canceled) {
			t.Errorf("%s: cause after cancel %v", tt.backend, context.Cause(ctx))
		}
	}
	b := backendOptions{Backend: "ref", Timeout: time.Nanosecond}
	ctx, cancel := b.withTimeout(context.Background(), "run-op")
	defer cancel()
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, driver.ErrTimeout) || cause.Error() != "run-op: "+driver.ErrTimeout.Error()+" after 1ns" {
		t.Errorf("cause %v", cause)
	}
}

func TestInterruptedMsg(t *testing.T) {
	for in, want := range map[string]string{
		"rms_norm: exec: context canceled":                     "rms_norm: exec: interrupted",
		"etrt worker: interrupted during sync; worker stopped": "etrt worker: interrupted during sync; worker stopped",
		"read x.bin: bad file":                                 "read x.bin: bad file (interrupted)",
	} {
		if got := interruptedMsg(in); got != want {
			t.Errorf("interruptedMsg(%q) = %q, want %q", in, got, want)
		}
	}
}

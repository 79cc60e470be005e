package etrt

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// TestProxyProfile: the profiler operations cross the worker protocol; a
// relative directory reaches the worker made absolute; misuse is an error
// that leaves the device usable.
func TestProxyProfile(t *testing.T) {
	conn, done := serveInProcess(t, "") // the current directory is a temporary one
	ctx := context.Background()
	dev, err := Dial(ctx, conn, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("prof", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := dev.StartProfile(ctx, "prof"); err != nil {
		t.Fatalf("StartProfile: %v", err)
	}
	if err := dev.StartProfile(ctx, "prof"); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second StartProfile = %v, want an error", err)
	}
	k, err := dev.LoadKernel(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := dev.Launch(ctx, k, nil, driver.LaunchOptions{}); err != nil {
			t.Fatalf("Launch after a failed call: %v", err)
		}
	}
	if err := dev.StopProfile(ctx); err != nil {
		t.Fatalf("StopProfile: %v", err)
	}
	b, err := os.ReadFile(filepath.Join("prof", driver.ProfileTraceFile))
	if err != nil || string(b) != "launches 2\n" {
		t.Errorf("trace = %q, %v", b, err)
	}
	if err := dev.StopProfile(ctx); err != nil {
		t.Errorf("StopProfile without a running profiler = %v, want nil", err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if err := dev.StartProfile(ctx, "prof"); !errors.Is(err, errClosed) {
		t.Errorf("StartProfile after Close = %v, want %v", err, errClosed)
	}
}

// noProfiler hides the fake device's profiler.
type noProfiler struct{ driver.Device }

func TestProxyProfileUnsupported(t *testing.T) {
	t.Chdir(t.TempDir())
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go func() {
		Serve(context.Background(), reqR, respW, func(ctx context.Context, req OpenRequest) (driver.Device, error) {
			d, err := openFakeDevice("")
			return noProfiler{d}, err
		})
		respW.Close()
		reqR.Close()
	}()
	ctx := context.Background()
	dev, err := Dial(ctx, pipeConn{Reader: respR, Writer: reqW, closers: []io.Closer{reqW, respR}}, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := dev.StartProfile(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no runtime profiler") {
		t.Errorf("StartProfile = %v, want an error naming the missing profiler", err)
	}
	if _, err := dev.Malloc(context.Background(), 64, 64); err != nil {
		t.Errorf("Malloc after the refusal: %v", err)
	}
}

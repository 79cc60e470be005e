package etrt

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// TestMain doubles as the worker: with ETRT_TEST_WORKER=1 the test binary
// serves the worker protocol, as "et __worker" does (the os/exec
// helper-process pattern).
func TestMain(m *testing.M) {
	if os.Getenv("ETRT_TEST_WORKER") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := ServeWorker(ctx, testOpener)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testOpener opens the in-package fake device for backend "fake" and the
// shim (the fake shim with -tags etrtfake) otherwise.
func testOpener(ctx context.Context, req OpenRequest) (driver.Device, error) {
	if req.Backend == "fake" {
		return openFakeDevice(os.Getenv("ETRT_TEST_FAULT"))
	}
	return Open(ctx, req)
}

//go:build etrtfake && cgo && linux

package etrt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/sysemu"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// openFakeShim opens the fake shim in this process with the given faults.
func openFakeShim(t *testing.T, faults string) (driver.Device, string, error) {
	t.Helper()
	if err := SetFakeFaults(faults); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetFakeFaults("") })
	dir := t.TempDir()
	dev, err := Open(context.Background(), OpenRequest{Backend: "sysemu", Sysemu: SysemuConfig{
		RunDir: dir, LogFile: filepath.Join(dir, "sysemu.log"),
	}})
	if dev != nil {
		t.Cleanup(func() { dev.Close() })
	}
	return dev, dir, err
}

func TestShimDevice(t *testing.T) {
	dev, dir, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	info := dev.Info()
	if info.Kind != driver.KindSysemu || info.Name != "sysemu0" {
		t.Errorf("Info = %+v", info)
	}
	// The fake shim reports what the runtime reports over DeviceLayerFake.
	if info.Props != driver.FakeProps() {
		t.Errorf("Props = %+v, want %+v", info.Props, driver.FakeProps())
	}
	exercise(t, dev)
	got := FakeLaunches()
	want := FakeLaunch{Count: 1, Kernel: 0, ShireMask: 1, Barrier: true, ArgsBytes: 1008}
	if got != want {
		t.Errorf("FakeLaunches = %+v, want %+v", got, want)
	}
	for _, f := range []string{"sysemu.log", "spio_uart0_tx.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the fake emulator did not write %s: %v", f, err)
		}
	}
	// A launch with no mask gets the device's compute mask.
	k, _ := dev.LoadKernel(context.Background(), "k", sysemuKernelELF())
	if err := dev.Launch(context.Background(), k, nil, driver.LaunchOptions{FlushL3: true}); err != nil {
		t.Fatal(err)
	}
	if got := FakeLaunches(); got.ShireMask != 0xFFFFFFFF || !got.FlushL3 || got.Barrier || got.ArgsBytes != 0 {
		t.Errorf("FakeLaunches = %+v", got)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Malloc(context.Background(), 64, 64); !errors.Is(err, errClosed) {
		t.Errorf("Malloc after Close = %v", err)
	}
}

func TestShimCopiesAreAsynchronous(t *testing.T) {
	// The fake runs copies only at the wait: Write's data must survive in
	// C memory until then, and Read must wait before copying out.
	dev, _, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := dev.Malloc(context.Background(), 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = byte(i * 7)
	}
	if err := dev.Write(ctx, p, src); err != nil {
		t.Fatal(err)
	}
	clear(src[:4096]) // the Go buffer may be reused at once
	dst := make([]byte, 4096)
	if err := dev.Read(ctx, p, dst); err != nil {
		t.Fatal(err)
	}
	for i, b := range dst {
		if b != byte(i*7) {
			t.Fatalf("byte %d = %d, want %d", i, b, byte(i*7))
		}
	}
}

func TestShimFaults(t *testing.T) {
	t.Run("stream error", func(t *testing.T) {
		dev, _, err := openFakeShim(t, "stream_error")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		k, err := dev.LoadKernel(ctx, "k", sysemuKernelELF())
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Launch(ctx, k, []byte{1, 2, 3}, driver.LaunchOptions{ShireMask: 1}); err != nil {
			t.Fatal(err)
		}
		errs, err := dev.Sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != 1 {
			t.Fatalf("Sync = %+v, want one error", errs)
		}
		e := errs[0]
		want := []driver.ErrorContext{
			{Hart: 0, Cause: 5, EPC: 0x8005b39010, TVal: 0xdead0000, Detail: "U-mode exception: load access fault", Kind: "U-mode exception"},
			{Hart: 1, Cause: 15, EPC: 0x8005b39020, TVal: 0xdead0040, Detail: "U-mode exception: store/AMO page fault", Kind: "U-mode exception"},
		}
		if e.Code != "KernelLaunchException" || len(e.Contexts) != 2 || e.Contexts[0] != want[0] || e.Contexts[1] != want[1] {
			t.Errorf("stream error = %+v", e)
		}
		if want := "2 hart(s): U-mode exception: load access fault x1, U-mode exception: store/AMO page fault x1; compute shire mask 0x1"; e.Message != want {
			t.Errorf("Message = %q, want %q", e.Message, want)
		}
		// Retrieved errors are moved out: the next Sync is clean.
		if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
			t.Errorf("second Sync = %v, %v", errs, err)
		}
	})
	t.Run("load failure", func(t *testing.T) {
		dev, _, err := openFakeShim(t, "load_fail")
		if err != nil {
			t.Fatal(err)
		}
		_, err = dev.LoadKernel(context.Background(), "rms_norm_f32", sysemuKernelELF())
		if err == nil || err.Error() != "etrt: load rms_norm_f32: fake shim: loadCode: scripted load failure" {
			t.Errorf("LoadKernel = %v", err)
		}
	})
	t.Run("open failure with an empty message", func(t *testing.T) {
		_, dir, err := openFakeShim(t, "open_fail")
		if err == nil || !strings.Contains(err.Error(), "empty message") {
			t.Errorf("Open = %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "sysemu.log")); !strings.Contains(string(b), "FATAL") {
			t.Errorf("sysemu.log = %q", b)
		}
	})
	t.Run("unknown fault", func(t *testing.T) {
		if err := SetFakeFaults("hang,nope"); err == nil {
			t.Error("SetFakeFaults accepted an unknown fault")
		}
	})
	t.Run("bad addresses", func(t *testing.T) {
		dev, _, err := openFakeShim(t, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Write(context.Background(), 0x10, []byte{1}); err == nil || !strings.Contains(err.Error(), "write 1 bytes at 0x10") {
			t.Errorf("Write = %v", err)
		}
		if _, err := dev.LoadKernel(context.Background(), "k", []byte("<html>")); err == nil || !strings.Contains(err.Error(), "not an ELF") {
			t.Errorf("LoadKernel(html) = %v", err)
		}
		if _, err := dev.LoadKernel(context.Background(), "k", nil); err == nil {
			t.Error("LoadKernel(nil) succeeded")
		}
	})
	t.Run("pcie device index", func(t *testing.T) {
		SetFakeFaults("")
		_, err := Open(context.Background(), OpenRequest{Backend: "pcie", Index: 1})
		if !errors.Is(err, driver.ErrNoDevice) {
			t.Errorf("Open(pcie 1) = %v, want ErrNoDevice", err)
		}
	})
}

// sysemuWorker returns worker options for the fake shim's sysemu backend
// over a fake (but sane) install.
func sysemuWorker(t *testing.T, faults string) WorkerOptions {
	t.Helper()
	prefix := t.TempDir()
	sysemutest.WriteInstall(t, prefix)
	o := testWorker(t, "sysemu", faults)
	o.Prefix = sysemu.Prefix{Dir: prefix, Source: sysemu.SourceFlag}
	o.SysemuOpts = []string{"-l"}
	return o
}

func TestWorkerSysemuFake(t *testing.T) {
	dev, err := OpenWorker(context.Background(), sysemuWorker(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if info := dev.Info(); info.Kind != driver.KindSysemu || info.Props != driver.FakeProps() {
		t.Errorf("Info = %+v", info)
	}
	exercise(t, dev)
	pid := workerPid(dev)
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "worker", pid)
}

func TestWorkerSysemuFakeFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("boot hangs", func(t *testing.T) {
		o := sysemuWorker(t, "hang_open")
		o.Timeout = 2 * 1e9
		_, err := OpenWorker(ctx, o)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Op != "open" {
			t.Fatalf("OpenWorker = %v, want a boot timeout", err)
		}
		if !strings.Contains(err.Error(), "spio_uart0_tx.log: MAIN:[txt]MemShire Configure") ||
			!strings.Contains(err.Error(), `sysemu.log: INFO Loading ELF: "fake"`) {
			t.Errorf("error lacks the log tails: %v", err)
		}
	})
	t.Run("wait hangs", func(t *testing.T) {
		dev, err := OpenWorker(ctx, sysemuWorker(t, "hang_wait"))
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		p, _ := dev.Malloc(context.Background(), 64, 0)
		dev.Write(ctx, p, []byte{1})
		cctx, cancel := context.WithTimeout(ctx, 2*1e9)
		defer cancel()
		if _, err := dev.Sync(cctx); !errors.Is(err, driver.ErrTimeout) {
			t.Errorf("Sync = %v, want ErrTimeout", err)
		}
	})
	t.Run("runtime aborts", func(t *testing.T) {
		dev, err := OpenWorker(ctx, sysemuWorker(t, "crash"))
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		k, err := dev.LoadKernel(ctx, "k", sysemuKernelELF())
		if err != nil {
			t.Fatal(err)
		}
		err = dev.Launch(ctx, k, nil, driver.LaunchOptions{})
		var we *WorkerError
		if !errors.As(err, &we) || !strings.Contains(we.Stderr, "scripted crash in kernelLaunch") {
			t.Errorf("Launch = %v, want the worker's death", err)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		dev, err := OpenWorker(ctx, sysemuWorker(t, "stream_error"))
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		k, _ := dev.LoadKernel(ctx, "k", sysemuKernelELF())
		dev.Launch(ctx, k, nil, driver.LaunchOptions{})
		errs, err := dev.Sync(ctx)
		if err != nil || len(errs) != 1 || errs[0].Code != "KernelLaunchException" || len(errs[0].Contexts) != 2 {
			t.Errorf("Sync = %+v, %v", errs, err)
		}
	})
	t.Run("boot fails with an empty message", func(t *testing.T) {
		o := sysemuWorker(t, "open_fail")
		_, err := OpenWorker(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "empty message") || !strings.Contains(err.Error(), o.RunDir) {
			t.Errorf("OpenWorker = %v", err)
		}
	})
	t.Run("broken install", func(t *testing.T) {
		o := testWorker(t, "sysemu", "")
		o.Prefix = sysemu.Prefix{Dir: t.TempDir(), Source: sysemu.SourceFlag}
		o.RunDir = ""
		_, err := OpenWorker(ctx, o)
		var ce *CheckError
		if !errors.As(err, &ce) || !errors.Is(err, driver.ErrUnavailable) {
			t.Fatalf("OpenWorker = %v, want a CheckError", err)
		}
		if !strings.Contains(err.Error(), "firmware.bl2") || !strings.Contains(err.Error(), "not booting") {
			t.Errorf("message = %q", err)
		}
	})
}

// The fake has no runtime, so no inactivity hints reach it; the call works
// on an open device and fails on a closed one.
func TestShimInactivityHintsFake(t *testing.T) {
	dev, _, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	sd := dev.(*shimDevice)
	if f, d, err := sd.inactivityHints(); f != 0 || d != 0 || err != nil {
		t.Errorf("inactivityHints = %d, %d, %v; want 0, 0, nil", f, d, err)
	}
	dev.Close()
	if _, _, err := sd.inactivityHints(); !errors.Is(err, errClosed) {
		t.Errorf("inactivityHints after Close: %v, want errClosed", err)
	}
}

// Write keeps at most maxPending bytes of queued copies: past the bound it
// waits for the stream and frees the copies it waited for, so later
// writes are asynchronous again and the C memory stays bounded (issue 33).
func TestWriteReleasesDrainedCopies(t *testing.T) {
	dev, _, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	d := dev.(*shimDevice)
	d.maxPending = 4 << 10
	p, err := dev.Malloc(context.Background(), 64<<10, 0)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 3<<10)
	for i := range 20 {
		if err := dev.Write(context.Background(), p+driver.DevPtr(i*len(src)), src); err != nil {
			t.Fatal(err)
		}
		if d.pendingBytes > d.maxPending+uint64(len(src)) || len(d.pending) > 2 {
			t.Fatalf("after write %d: %d bytes in %d buffers pending, bound %d", i, d.pendingBytes, len(d.pending), d.maxPending)
		}
	}
}

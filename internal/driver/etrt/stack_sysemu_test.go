//go:build sysemu && etrt && !etrtfake && cgo && linux

package etrt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/sysemu"
)

// requireSysemuInstall skips unless the install passes et check-sysemu.
func requireSysemuInstall(t *testing.T) sysemu.Prefix {
	t.Helper()
	p := sysemu.ResolvePrefix("", os.Getenv)
	if rep := sysemu.Check(context.Background(), sysemu.Options{Prefix: p, Cwd: t.TempDir()}); !rep.OK() {
		t.Skipf("no sane ET install at %s: %v", p.Dir, (&CheckError{Report: rep}).Error())
	}
	return p
}

// Tests on the real emulator of an ET install ($ET_TOOLCHAIN, e.g. the test
// stack ../shared/et-stack/opt/et), with the CGO flags of docs/etrt.md
// (.ci/build-etrt):
//
//	go test -tags sysemu,etrt ./internal/driver/etrt -run Sysemu -v
//
// They skip when ET_TOOLCHAIN is unset or the install fails its checks.

// The upstream error kernels fault in their own ways, and each hart
// context is decoded with the registers the runtime fills for its type:
// no 0xCD fill pattern is ever reported as a cause, epc or tval.
func TestSysemuHartContexts(t *testing.T) {
	if os.Getenv("ET_TOOLCHAIN") == "" {
		t.Skip("ET_TOOLCHAIN is unset")
	}
	prefix := requireSysemuInstall(t)
	kernels := filepath.Join(prefix.Dir, "lib", "esperanto-fw", "kernels")
	o := WorkerOptions{Exe: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{"ETRT_TEST_WORKER=1"},
		Backend: "sysemu", Prefix: prefix, RunDir: t.TempDir()}
	ctx := context.Background()
	dev, err := OpenWorker(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	tests := []struct {
		kernel, code, kind, detail, unfilled string
	}{
		{"error", "KernelLaunchUnexpectedError", "kernel execution error", "kernel execution error (user error -10)", "cause,epc,tval"},
		{"bus_error", "KernelLaunchUnexpectedError", "bus error", "bus error", "cause,epc,tval"},
		{"exception", "KernelLaunchException", "U-mode exception", "U-mode exception: store/AMO access fault", ""},
		{"abort", "KernelLaunchUnexpectedError", "self abort", "self abort", ""},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			elf, err := os.ReadFile(filepath.Join(kernels, tt.kernel+".elf"))
			if err != nil {
				t.Skip(err)
			}
			k, err := dev.LoadKernel(ctx, tt.kernel, elf)
			if err != nil {
				t.Fatal(err)
			}
			if err := dev.Launch(ctx, k, nil, driver.LaunchOptions{Barrier: true}); err != nil {
				t.Fatal(err)
			}
			errs, err := dev.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != 1 || errs[0].Code != tt.code || len(errs[0].Contexts) == 0 {
				t.Fatalf("stream errors %+v", errs)
			}
			t.Logf("%s: %s", errs[0].Code, errs[0].Message)
			for _, c := range errs[0].Contexts {
				if c.Kind != tt.kind || c.Detail != tt.detail || c.Unfilled != tt.unfilled {
					t.Fatalf("hart %d: kind %q detail %q unfilled %q, want %q %q %q", c.Hart, c.Kind, c.Detail, c.Unfilled, tt.kind, tt.detail, tt.unfilled)
				}
				for _, v := range []uint64{c.Cause, c.EPC, c.TVal} {
					if v == unfilledWord {
						t.Fatalf("hart %d: the 0xCD fill pattern reported as data: %+v", c.Hart, c)
					}
				}
			}
		})
	}
	// The device stays usable after kernel faults.
	p, err := dev.Malloc(context.Background(), 4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Write(ctx, p, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
		t.Errorf("Sync after the faults = %v, %v", errs, err)
	}
}

// --timeout is a device watchdog: it adds up the time spent in device
// calls, so host work between calls (generating inputs, reference math)
// never fires it. Here the host waits longer than the whole budget between
// the boot and the first copy, and the copy still goes through; a hung
// kernel then uses the rest of the budget and is stopped by it.
func TestSysemuTimeoutCountsDeviceCalls(t *testing.T) {
	if os.Getenv("ET_TOOLCHAIN") == "" {
		t.Skip("ET_TOOLCHAIN is unset")
	}
	prefix := requireSysemuInstall(t)
	const budget = 30 * time.Second // boot takes 2-9 s on these machines
	o := WorkerOptions{Exe: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{"ETRT_TEST_WORKER=1"},
		Backend: "sysemu", Prefix: prefix, RunDir: t.TempDir(), Timeout: budget}
	ctx := context.Background()
	start := time.Now()
	dev, err := OpenWorker(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	booted := time.Since(start)
	time.Sleep(budget + 2*time.Second) // host work: not device time
	p, err := dev.Malloc(context.Background(), 4096, 64)
	if err != nil {
		t.Fatalf("malloc after %s of host work (boot took %s): %v", budget, booted, err)
	}
	if err := dev.Write(ctx, p, make([]byte, 4096)); err != nil {
		t.Fatalf("copy after %s of host work (boot took %s): %v", budget, booted, err)
	}
	elf, err := os.ReadFile(filepath.Join(prefix.Dir, "lib", "esperanto-fw", "kernels", "hang.elf"))
	if err != nil {
		t.Skip(err)
	}
	k, err := dev.LoadKernel(ctx, "hang", elf)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Launch(ctx, k, nil, driver.LaunchOptions{Barrier: true}); err != nil {
		t.Fatal(err)
	}
	_, err = dev.Sync(ctx)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("sync of a hung kernel: %v, want the watchdog's timeout", err)
	}
}

//go:build hardware && etrt && !etrtfake && cgo && linux

package etrt

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/sysemu"
)

// Opt-in tests on a real ET install (sysemu) or card (pcie):
//
//	go test -tags hardware,etrt ./internal/driver/etrt -run Hardware -v
//
// with the CGO flags of docs/etrt.md. ET_TOOLCHAIN (or TOOLCHAIN_ROOT, or
// /opt/et) names the install; ET_HW_TIMEOUT (a Go duration, default 5m)
// bounds each session.

func hwTimeout(t *testing.T) time.Duration {
	if s := os.Getenv("ET_HW_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("ET_HW_TIMEOUT: %v", err)
		}
		return d
	}
	return 5 * time.Minute
}

// requireSysemu skips unless the install passes et check-sysemu.
func requireSysemu(t *testing.T) sysemu.Prefix {
	t.Helper()
	p := sysemu.ResolvePrefix("", os.Getenv)
	if rep := sysemu.Check(context.Background(), sysemu.Options{Prefix: p, Cwd: t.TempDir()}); !rep.OK() {
		t.Skipf("no sane ET install at %s: %v", p.Dir, (&CheckError{Report: rep}).Error())
	}
	return p
}

// requireDevice skips unless /dev/et0_ops exists.
func requireDevice(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/et0_ops"); err != nil {
		t.Skipf("no ET card: %v", err)
	}
}

func hwRoundTrip(t *testing.T, dev driver.Device) {
	t.Helper()
	ctx := context.Background()
	p, err := dev.Malloc(context.Background(), 1<<20, 64)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("et-soc-1"), 1<<17)
	if err := dev.Write(ctx, p, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := dev.Read(ctx, p, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("device memory round trip differs")
	}
	if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
		t.Errorf("Sync = %v, %v", errs, err)
	}
	if err := dev.Free(context.Background(), p); err != nil {
		t.Error(err)
	}
}

func TestHardwareSysemu(t *testing.T) {
	prefix := requireSysemu(t)
	o := WorkerOptions{Exe: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{"ETRT_TEST_WORKER=1"},
		Backend: "sysemu", Prefix: prefix, RunDir: t.TempDir(), Timeout: hwTimeout(t)}
	dev, err := OpenWorker(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	info := dev.Info()
	t.Logf("booted: %+v", info)
	if info.Props.ComputeShireMask != 0xFFFFFFFF || info.Props.FrequencyMHz != 1000 || info.Props.DRAMBase != driver.SysemuDRAMBase {
		t.Errorf("props = %+v, want mask 0xFFFFFFFF, 1000 MHz, DRAM at %#x (reference §2, §9)", info.Props, driver.SysemuDRAMBase)
	}
	hwRoundTrip(t, dev)
}

func TestHardwarePCIe(t *testing.T) {
	requireDevice(t)
	o := WorkerOptions{Exe: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{"ETRT_TEST_WORKER=1"},
		Backend: "pcie", RunDir: t.TempDir(), Timeout: hwTimeout(t)}
	dev, err := OpenWorker(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	t.Logf("opened: %+v", dev.Info())
	hwRoundTrip(t, dev)
}

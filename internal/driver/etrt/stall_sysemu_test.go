//go:build sysemu && etrt && !etrtfake && cgo && linux

package etrt

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is this process's user+system CPU time.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The runtime calls hintInactivity whenever no event is in flight, which
// parks sys_emu; unparking it can cost 100 ms (docs/etrt.md, "No idle
// stalls"). The shim's forwarding device layer drops those hints while et
// works: here a burst of small copies, each waited for as run-op does,
// with a little host work between them makes the runtime hint in the gaps
// (dropped hints), and none reaches
// the emulator. Then et goes idle: the hints pass again, the emulator is
// parked, and the process stops using CPU instead of spinning a core.
// Run in this process (not a worker), so the emulator's CPU is ours.
func TestSysemuNoIdleStalls(t *testing.T) {
	if os.Getenv("ET_TOOLCHAIN") == "" {
		t.Skip("ET_TOOLCHAIN is unset")
	}
	prefix := requireSysemuInstall(t)
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := sysemuConfig(ctx, WorkerOptions{Backend: "sysemu", Prefix: prefix}, dir)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := Open(ctx, OpenRequest{Backend: "sysemu", Sysemu: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	sd := dev.(*shimDevice)

	const n = 1 << 20
	p, err := dev.Malloc(context.Background(), n, 64)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, n)
	f0, d0, err := sd.inactivityHints()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 16 {
		buf[0] = byte(i)
		if err := dev.Write(ctx, p, buf); err != nil {
			t.Fatal(err)
		}
		if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
			t.Fatalf("sync: %v %v", errs, err)
		}
		if err := dev.Read(ctx, p, buf); err != nil {
			t.Fatal(err)
		}
		if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
			t.Fatalf("sync: %v %v", errs, err)
		}
		if buf[0] != byte(i) {
			t.Fatalf("copy %d read back %d", i, buf[0])
		}
		// Host work between device calls, as between run-op's (the
		// worker's round trips, generating and judging data).
		time.Sleep(5 * time.Millisecond)
	}
	f1, d1, err := sd.inactivityHints()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("32 copies in %s: %d hints dropped, %d forwarded", time.Since(start), d1-d0, f1-f0)
	if d1 == d0 {
		t.Errorf("the runtime sent no inactivity hint through the shim's device layer during 32 copies: is the forwarding layer still the one the runtime uses?")
	}
	if f1 != f0 {
		t.Errorf("%d inactivity hints reached the emulator while et was copying: each parks it and the next call can wait 100 ms", f1-f0)
	}

	// Idle: after the grace the hints pass and the emulator is parked.
	time.Sleep(500 * time.Millisecond)
	c0, w0 := cpuTime(t), time.Now()
	time.Sleep(time.Second)
	cpu, wall := cpuTime(t)-c0, time.Since(w0)
	f2, _, err := sd.inactivityHints()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("idle: %d hints forwarded; CPU %s in %s", f2-f1, cpu, wall)
	if f2 == f1 {
		t.Errorf("no inactivity hint reached the emulator in 1.5 s of idling: it is never parked")
	}
	// A spinning emulator thread uses a whole core (less on a loaded
	// machine); a parked one wakes every 100 ms.
	if cpu > wall/2 {
		t.Errorf("idle process used %s of CPU in %s: the emulator spins instead of being parked", cpu, wall)
	}

	// The device works after being parked.
	if err := dev.Write(ctx, p, buf); err != nil {
		t.Fatal(err)
	}
	if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
		t.Fatalf("sync after idling: %v %v", errs, err)
	}
}

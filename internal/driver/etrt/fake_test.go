package etrt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// fakeDevice is a tiny in-memory driver.Device for protocol tests (the
// reference device may not be imported here). Faults, comma-separated:
//
//	open_fail     Open fails with driver.ErrNoDevice
//	hang_open     Open never returns (ignores its context, like a C call)
//	hang_sync     Sync never returns (ignores its context)
//	hang_malloc   Malloc never returns (ignores its context)
//	crash_launch  Launch kills the process
//	stream_error  Sync reports one stream error per launch
//
// At open it writes sysemu.log and spio_uart0_tx.log in the current
// directory, as the emulator would, so that log tails can be checked.
type fakeDevice struct {
	mu       sync.Mutex
	faults   map[string]bool
	next     uint64
	mem      map[uint64][]byte
	kernels  []string
	launches int
	pending  int
	closed   bool
	// profDir is the directory of the running profiler, or "".
	profDir string
}

var (
	_ driver.Device   = (*fakeDevice)(nil)
	_ driver.Profiler = (*fakeDevice)(nil)
)

const fakeBase = 0x8000

func openFakeDevice(faults string) (*fakeDevice, error) {
	d := &fakeDevice{faults: map[string]bool{}, next: fakeBase, mem: map[uint64][]byte{}}
	for _, f := range strings.Split(faults, ",") {
		if f != "" {
			d.faults[f] = true
		}
	}
	os.WriteFile("sysemu.log", []byte("INFO fake device booting\nINFO still booting\n"), 0o644)
	os.WriteFile("spio_uart0_tx.log", []byte("MAIN:[txt]Configure NOC\nMAIN:[txt]pcie_enable_link\n"), 0o644)
	if d.faults["open_fail"] {
		return nil, fmt.Errorf("fake open: %w", driver.ErrNoDevice)
	}
	if d.faults["hang_open"] {
		hangForever()
	}
	return d, nil
}

func hangForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func (d *fakeDevice) Info() driver.Info {
	return driver.Info{Kind: "fake", Index: 0, Name: "fake0", Props: driver.FakeProps()}
}

func (d *fakeDevice) Malloc(ctx context.Context, size, align uint64) (driver.DevPtr, error) {
	if d.faults["hang_malloc"] {
		hangForever()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if align == 0 {
		align = 64
	}
	if size == 0 || size > 1<<24 {
		return 0, fmt.Errorf("malloc: bad size %d", size)
	}
	p := (d.next + align - 1) / align * align
	d.mem[p] = make([]byte, size)
	d.next = p + size
	return driver.DevPtr(p), nil
}

func (d *fakeDevice) Free(ctx context.Context, p driver.DevPtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.mem[uint64(p)]; !ok {
		return fmt.Errorf("free 0x%x: not an allocation", uint64(p))
	}
	delete(d.mem, uint64(p))
	return nil
}

// find returns the allocation bytes at [p, p+n).
func (d *fakeDevice) find(p driver.DevPtr, n int) ([]byte, error) {
	bases := make([]uint64, 0, len(d.mem))
	for b := range d.mem {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		buf := d.mem[b]
		if uint64(p) >= b && uint64(p)-b+uint64(n) <= uint64(len(buf)) {
			return buf[uint64(p)-b : uint64(p)-b+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("0x%x+%d is outside every allocation", uint64(p), n)
}

func (d *fakeDevice) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.find(dst, len(src))
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	copy(buf, src)
	return nil
}

func (d *fakeDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.find(src, len(dst))
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	copy(dst, buf)
	return nil
}

func (d *fakeDevice) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if name == "" {
		return 0, inputErr{"load: empty kernel name"}
	}
	d.kernels = append(d.kernels, name)
	return driver.KernelID(len(d.kernels) - 1), nil
}

// inputErr is an error with the InputError marker (exit 2).
type inputErr struct{ msg string }

func (e inputErr) Error() string { return e.msg }
func (e inputErr) InputError()   {}

func (d *fakeDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if int(k) >= len(d.kernels) {
		return fmt.Errorf("launch: unknown kernel %d", k)
	}
	if d.faults["crash_launch"] {
		fmt.Fprintln(os.Stderr, "fake device: scripted crash in launch")
		os.Exit(3)
	}
	d.launches++
	d.pending++
	return nil
}

func (d *fakeDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	if d.faults["hang_sync"] {
		hangForever()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driver.StreamError
	if d.faults["stream_error"] {
		for i := 0; i < d.pending; i++ {
			out = append(out, driver.StreamError{Code: "KernelLaunchException", Message: "1 hart(s)",
				Contexts: []driver.ErrorContext{{Hart: 3, Cause: 5, EPC: 0x8005b39010, TVal: 0xdead0000, Detail: "U-mode exception: load access fault"}}})
		}
	}
	d.pending = 0
	return out, nil
}

// StartProfile implements driver.Profiler; the fake's "trace" is one
// line saying how many kernels were launched while it ran. A relative dir
// is refused: the worker runs in its run directory, not the caller's.
func (d *fakeDevice) StartProfile(ctx context.Context, dir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("profile: relative directory %q", dir)
	}
	if d.profDir != "" {
		return errors.New("profile: already running")
	}
	d.profDir, d.launches = dir, 0
	return nil
}

// StopProfile implements driver.Profiler.
func (d *fakeDevice) StopProfile(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.profDir == "" {
		return nil
	}
	dir := d.profDir
	d.profDir = ""
	return os.WriteFile(filepath.Join(dir, driver.ProfileTraceFile), []byte(fmt.Sprintf("launches %d\n", d.launches)), 0o644)
}

func (d *fakeDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

func writeTestFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

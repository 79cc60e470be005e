package exec

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/profile"
)

// fakeClock advances 1 µs per reading.
func fakeClock() func() time.Time {
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Microsecond)
		return t
	}
}

// countingDevice is the reference device (Timer included, by embedding)
// counting the bytes copied each way.
type countingDevice struct {
	*ref.Device
	writes, reads         int
	writeBytes, readBytes uint64
}

func (d *countingDevice) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	d.writes++
	d.writeBytes += uint64(len(src))
	return d.Device.Write(ctx, dst, src)
}

func (d *countingDevice) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	d.reads++
	d.readBytes += uint64(len(dst))
	return d.Device.Read(ctx, src, dst)
}

// hostOnly hides the reference device's Timer.
type hostOnly struct{ driver.Device }

// decoded is a written trace read back through the profile package.
type decoded struct {
	events   []profile.Event
	launches []profile.Launch
	copies   []profile.Copy
	stats    profile.JoinStats
	warnings []profile.Warning
	classes  map[string]int
}

func decodeTrace(t *testing.T, trace []byte, km []byte) decoded {
	t.Helper()
	m, err := kernelmap.Read(bytes.NewReader(km))
	if err != nil {
		t.Fatalf("kernel map: %v\n%s", err, km)
	}
	var w profile.Warnings
	var d decoded
	d.classes = map[string]int{}
	v := profile.NewValidator("trace", &w)
	j := profile.NewJoiner(profile.JoinOptions{Kernels: m, Warnings: &w,
		OnLaunch: func(l *profile.Launch) { d.launches = append(d.launches, *l) },
		OnCopy:   func(c *profile.Copy) { d.copies = append(d.copies, *c) }})
	st, err := profile.Decode(bytes.NewReader(trace), profile.Options{File: "trace", Warnings: &w}, func(e profile.Event) error {
		v.Check(&e)
		j.Add(&e)
		d.events = append(d.events, e)
		d.classes[e.Class]++
		return nil
	})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	v.Finish(st)
	d.stats = j.Flush()
	d.warnings = w.List()
	if st.Truncated {
		t.Error("trace is truncated")
	}
	return d
}

func TestTraceOnReferenceDevice(t *testing.T) {
	for _, tt := range []struct {
		name string
		uber bool
		elf  bool
	}{
		{"direct", false, false},
		{"uberkernel", true, false},
		{"with-elf", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dev := &countingDevice{Device: ref.New(ref.Options{})}
			rec := NewTraceRecorder(fakeClock())
			opts := Options{Trace: rec}
			var elfCycles uint64 // the DMA model's cycles for the ELFs loaded
			if tt.elf {
				opts.KernelELF = func(name string) ([]byte, error) {
					b := make([]byte, 100+len(name))
					elfCycles += dev.CopyCycles(uint64(len(b)))
					return b, nil
				}
			}
			res, _, err := run(t, dev, tt.uber, opts)
			if err != nil {
				t.Fatal(err)
			}
			var trace, km bytes.Buffer
			if err := rec.WriteTrace(&trace); err != nil {
				t.Fatal(err)
			}
			if err := rec.WriteKernelMap(&km); err != nil {
				t.Fatal(err)
			}
			d := decodeTrace(t, trace.Bytes(), km.Bytes())
			if len(d.warnings) != 0 {
				t.Errorf("warnings: %v", d.warnings)
			}
			if d.stats.IncompleteLaunches+d.stats.IncompleteCopies+d.stats.UnmatchedResponses+d.stats.LaunchesWithoutAPI != 0 {
				t.Errorf("join stats: %+v", d.stats)
			}

			// Launches: one per device launch, in order, named by the
			// kernel map, with the device's simulated cycles.
			recs := dev.Launches()
			if len(d.launches) != len(recs) || len(recs) == 0 {
				t.Fatalf("%d launches in the trace, %d on the device", len(d.launches), len(recs))
			}
			if len(res.Launches) != len(recs) {
				t.Errorf("%d launches in the result, %d on the device", len(res.Launches), len(recs))
			}
			var prevEnd uint64
			for i, l := range d.launches {
				r := recs[i]
				if l.Kernel != r.Kernel {
					t.Errorf("launch %d: kernel %q, device ran %q", i, l.Kernel, r.Kernel)
				}
				if l.ExecCycles != r.EndCycle-r.StartCycle {
					t.Errorf("launch %d (%s): exec %d cycles, device simulated %d", i, r.Kernel, l.ExecCycles, r.EndCycle-r.StartCycle)
				}
				if l.FreqMHz != 1000 || l.Device != 0 || l.Stream != 1 || !l.Complete() {
					t.Errorf("launch %d: %+v", i, l)
				}
				if l.DispatchCycles() < prevEnd {
					t.Errorf("launch %d starts at cycle %d before the previous command ended (%d)", i, l.DispatchCycles(), prevEnd)
				}
				prevEnd = l.EndCycles()
				if tt.uber && l.Kernel != "uberkernel" {
					t.Errorf("uberkernel run launched %s", l.Kernel)
				}
			}

			// Copies: every Write is an H2D and every Read a D2H, with its
			// bytes; with ELFs, one internal copy per kernel loaded.
			got := map[profile.Direction]uint64{}
			n := map[profile.Direction]int{}
			for _, c := range d.copies {
				n[c.Direction]++
				got[c.Direction] += c.Bytes
				if c.Direction == profile.Internal {
					got[c.Direction] += c.DMAExecCycles // internal copies carry no size
					continue
				}
				if !c.SizeKnown || c.Commands != 1 || c.Responses != 1 || c.CMACopies != 1 || c.DMAExecCycles != dev.CopyCycles(c.Bytes) {
					t.Errorf("copy %+v", c)
				}
			}
			if n[profile.H2D] != dev.writes || got[profile.H2D] != dev.writeBytes {
				t.Errorf("H2D: %d copies, %d bytes; device: %d writes, %d bytes", n[profile.H2D], got[profile.H2D], dev.writes, dev.writeBytes)
			}
			if n[profile.D2H] != dev.reads || got[profile.D2H] != dev.readBytes || dev.reads == 0 {
				t.Errorf("D2H: %d copies, %d bytes; device: %d reads, %d bytes", n[profile.D2H], got[profile.D2H], dev.reads, dev.readBytes)
			}
			kernels := rec.Kernels()
			if tt.elf {
				if n[profile.Internal] != len(kernels) || got[profile.Internal] != elfCycles {
					t.Errorf("internal: %d copies, %d DMA cycles; want %d and %d", n[profile.Internal], got[profile.Internal], len(kernels), elfCycles)
				}
			} else if n[profile.Internal] != 0 {
				t.Errorf("%d internal copies without ELFs", n[profile.Internal])
			}

			// Kernel map: one entry per kernel loaded, ids from 0, matching
			// the LoadCode events.
			if d.classes[profile.ClassLoadCode] != len(kernels) || d.classes[profile.ClassUnloadCode] != len(kernels) {
				t.Errorf("%d LoadCode, %d UnloadCode, %d kernels", d.classes[profile.ClassLoadCode], d.classes[profile.ClassUnloadCode], len(kernels))
			}
			for i, k := range kernels {
				if k.ID != i {
					t.Errorf("kernel %d: %+v", i, k)
				}
			}
			for _, c := range []string{profile.ClassStartProfiling, profile.ClassGetDeviceProperties, profile.ClassCreateStream, profile.ClassEndProfiling} {
				if d.classes[c] != 1 {
					t.Errorf("%d %s events", d.classes[c], c)
				}
			}
			if d.events[0].Class != profile.ClassStartProfiling || d.events[len(d.events)-1].Class != profile.ClassEndProfiling {
				t.Errorf("trace runs from %s to %s", d.events[0].Class, d.events[len(d.events)-1].Class)
			}
			if d.classes[profile.ClassMallocDevice] != d.classes[profile.ClassFreeDevice] || d.classes[profile.ClassMallocDevice] == 0 {
				t.Errorf("%d mallocs, %d frees", d.classes[profile.ClassMallocDevice], d.classes[profile.ClassFreeDevice])
			}
			// The memory counter returns to zero once everything is freed.
			var last profile.Event
			for _, e := range d.events {
				if e.Class == profile.ClassMemoryStats {
					last = e
				}
			}
			if last.MemAllocatedBytes != 0 || last.MemFreeBytes != driver.FakeProps().MemoryBytes {
				t.Errorf("last MemoryStats: allocated %d, free %d", last.MemAllocatedBytes, last.MemFreeBytes)
			}

			// The full report reads it without warnings.
			rep, err := profile.BuildReport([]profile.Input{{File: "trace", R: bytes.NewReader(trace.Bytes())}},
				profile.ReportOptions{Views: profile.AllViews, Kernels: kernelmap.New(kernels...), Device: -1})
			if err != nil {
				t.Fatal(err)
			}
			wantWarn := 0
			if tt.uber {
				wantWarn = 1 // "the only kernel is uberkernel"
			}
			if len(rep.Warnings) != wantWarn {
				t.Errorf("report warnings: %v", rep.Warnings)
			}
		})
	}
}

// TestTraceSpansRuns: two runs on one recorder are one process: the
// device is set up once, each kernel is loaded (and named) once.
func TestTraceSpansRuns(t *testing.T) {
	dev := ref.New(ref.Options{})
	rec := NewTraceRecorder(fakeClock())
	for i := 0; i < 2; i++ {
		if _, _, err := run(t, dev, false, Options{Trace: rec}); err != nil {
			t.Fatal(err)
		}
	}
	var trace, km bytes.Buffer
	if err := rec.WriteTrace(&trace); err != nil {
		t.Fatal(err)
	}
	if err := rec.WriteKernelMap(&km); err != nil {
		t.Fatal(err)
	}
	d := decodeTrace(t, trace.Bytes(), km.Bytes())
	if len(d.warnings) != 0 {
		t.Errorf("warnings: %v", d.warnings)
	}
	names := map[string]bool{}
	for _, k := range rec.Kernels() {
		if names[k.Name] {
			t.Errorf("kernel %s mapped twice", k.Name)
		}
		names[k.Name] = true
	}
	if d.classes[profile.ClassCreateStream] != 1 || d.classes[profile.ClassLoadCode] != len(names) {
		t.Errorf("%d CreateStream, %d LoadCode for %d kernels", d.classes[profile.ClassCreateStream], d.classes[profile.ClassLoadCode], len(names))
	}
	if len(d.launches) != len(dev.Launches()) {
		t.Errorf("%d launches traced, %d run", len(d.launches), len(dev.Launches()))
	}
	// Finish is final: a later run records nothing more.
	n := len(d.events)
	if _, _, err := run(t, dev, false, Options{Trace: rec}); err != nil {
		t.Fatal(err)
	}
	trace.Reset()
	if err := rec.WriteTrace(&trace); err != nil {
		t.Fatal(err)
	}
	if d := decodeTrace(t, trace.Bytes(), km.Bytes()); len(d.events) != n {
		t.Errorf("%d events after Finish, want %d", len(d.events), n)
	}
}

// TestTraceWithoutTimer: a device with no simulated time is timed on the
// host clock (1 µs per clock reading here: 1000 cycles at 1000 MHz).
func TestTraceWithoutTimer(t *testing.T) {
	rec := NewTraceRecorder(fakeClock())
	if _, _, err := run(t, hostOnly{ref.New(ref.Options{})}, false, Options{Trace: rec}); err != nil {
		t.Fatal(err)
	}
	var trace, km bytes.Buffer
	if err := rec.WriteTrace(&trace); err != nil {
		t.Fatal(err)
	}
	if err := rec.WriteKernelMap(&km); err != nil {
		t.Fatal(err)
	}
	d := decodeTrace(t, trace.Bytes(), km.Bytes())
	if len(d.warnings) != 0 || len(d.launches) == 0 {
		t.Fatalf("%d launches, warnings %v", len(d.launches), d.warnings)
	}
	for _, l := range d.launches {
		if ns := l.LaunchAPINS; l.ExecCycles != uint64(ns) {
			t.Errorf("%s: exec %d cycles, host launch %d ns", l.Kernel, l.ExecCycles, ns)
		}
	}
}

// TestTraceByteFormat: the recorder writes the runtime's format (the
// Writer's), and a recorder that recorded nothing still writes a
// well-formed trace.
func TestTraceByteFormat(t *testing.T) {
	rec := NewTraceRecorder(fakeClock())
	var trace, km bytes.Buffer
	if err := rec.WriteTrace(&trace); err != nil {
		t.Fatal(err)
	}
	if err := rec.WriteKernelMap(&km); err != nil {
		t.Fatal(err)
	}
	d := decodeTrace(t, trace.Bytes(), km.Bytes())
	var classes []string
	for _, e := range d.events {
		classes = append(classes, e.Class)
	}
	if want := []string{profile.ClassStartProfiling, profile.ClassEndProfiling}; !reflect.DeepEqual(classes, want) {
		t.Errorf("events %v, want %v", classes, want)
	}
	if !bytes.HasPrefix(trace.Bytes(), []byte("{\n    \"value0\": {\n        \"type\": \"Instant\",\n        \"class\": \"StartProfiling\"")) ||
		!bytes.HasSuffix(trace.Bytes(), []byte("\n    }\n}")) {
		t.Errorf("trace bytes:\n%s", trace.Bytes())
	}
	if km.String() != "{\n}\n" && km.String() != "{}\n" {
		t.Errorf("empty kernel map: %q", km.String())
	}
}

// TestTraceIgnoresFailedCalls: a call the device refuses records nothing.
func TestTraceIgnoresFailedCalls(t *testing.T) {
	ctx := context.Background()
	rec := NewTraceRecorder(fakeClock())
	dev := rec.attach(ref.New(ref.Options{}), nil)
	before := len(rec.events)
	if _, err := dev.LoadKernel(ctx, "no_such_kernel", nil); err == nil {
		t.Fatal("loading an unknown kernel succeeded")
	}
	if err := dev.Launch(ctx, 42, nil, driver.LaunchOptions{}); err == nil {
		t.Fatal("launching an unloaded kernel succeeded")
	}
	if err := dev.Write(ctx, 0, []byte{1}); err == nil {
		t.Fatal("writing to address 0 succeeded")
	}
	if err := dev.Free(context.Background(), 12345); err == nil {
		t.Fatal("freeing a bad pointer succeeded")
	}
	if got := len(rec.events); got != before {
		t.Errorf("%d events recorded for failed calls: %v", got-before, fmt.Sprint(rec.events[before:]))
	}
	if rec.attach(dev, nil) != dev || len(rec.devs) != 1 {
		t.Error("attaching the same device twice made two devices")
	}
}

// sliceDevice is a device whose dynamic type cannot be compared.
type sliceDevice struct {
	driver.Device
	_ []int
}

func TestTraceAttachUncomparable(t *testing.T) {
	rec := NewTraceRecorder(fakeClock())
	d := sliceDevice{Device: ref.New(ref.Options{})}
	rec.attach(d, nil)
	rec.attach(d, nil) // must not panic; a second device entry is acceptable
	if len(rec.devs) != 2 || rec.devs[0].id == rec.devs[1].id {
		t.Errorf("devices %d, ids must differ", len(rec.devs))
	}
}

package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/kernelmap"
)

// chromeDoc is the parsed form of an export, for checks.
type chromeDoc struct {
	DisplayTimeUnit string           `json:"displayTimeUnit"`
	OtherData       map[string]any   `json:"otherData"`
	TraceEvents     []map[string]any `json:"traceEvents"`
}

// validateChrome parses an export and checks the rules viewers rely on:
// the document is JSON; every event has name/ph/pid/tid; every "X" has
// numeric ts and dur ≥ 0 written as µs with three decimals; every pid and
// tid used is named by "M" metadata; flows (bind_id) have exactly one
// start (flow_out only), one end (flow_in only) and only steps between;
// "C" counters carry numeric args; and "X" slices on one track nest.
func validateChrome(t *testing.T, data []byte) chromeDoc {
	t.Helper()
	var doc chromeDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	if doc.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit = %q", doc.DisplayTimeUnit)
	}
	// Raw number text, to check the µs format.
	var raw struct {
		TraceEvents []map[string]json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	type track struct{ pid, tid int64 }
	type slice struct{ start, end int64 } // ns
	procNamed := map[int64]bool{}
	threadNamed := map[track]bool{}
	used := map[track]bool{}
	slices := map[track][]slice{}
	type flow struct{ starts, ends, steps int }
	flows := map[string]*flow{}
	num := func(i int, ev map[string]any, k string) int64 {
		n, ok := ev[k].(json.Number)
		if !ok {
			t.Fatalf("event %d: %s is %T %v, want a number", i, k, ev[k], ev[k])
		}
		v, err := n.Int64()
		if err != nil {
			t.Fatalf("event %d: %s = %v: %v", i, k, n, err)
		}
		return v
	}
	micros := func(i int, k string) int64 {
		s := string(raw.TraceEvents[i][k])
		dot := strings.IndexByte(s, '.')
		if dot < 0 || len(s)-dot-1 != 3 {
			t.Fatalf("event %d: %s = %s, want µs with three decimals", i, k, s)
		}
		v, err := strconv.ParseInt(s[:dot]+s[dot+1:], 10, 64)
		if err != nil {
			t.Fatalf("event %d: %s = %s: %v", i, k, s, err)
		}
		return v
	}
	for i, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		if _, ok := ev["name"].(string); !ok {
			t.Fatalf("event %d has no name: %v", i, ev)
		}
		tr := track{num(i, ev, "pid"), num(i, ev, "tid")}
		switch ph {
		case "M":
			args, _ := ev["args"].(map[string]any)
			switch ev["name"] {
			case "process_name":
				if s, _ := args["name"].(string); s == "" {
					t.Errorf("event %d: empty process name", i)
				}
				procNamed[tr.pid] = true
			case "thread_name":
				if s, _ := args["name"].(string); s == "" {
					t.Errorf("event %d: empty thread name", i)
				}
				threadNamed[tr] = true
			}
			continue
		case "X":
			ts, dur := micros(i, "ts"), micros(i, "dur")
			if ts < 0 || dur < 0 {
				t.Errorf("event %d: ts %d dur %d", i, ts, dur)
			}
			slices[tr] = append(slices[tr], slice{ts, ts + dur})
		case "i":
			micros(i, "ts")
			if ev["s"] != "t" {
				t.Errorf("event %d: instant scope %v", i, ev["s"])
			}
		case "C":
			micros(i, "ts")
			args, ok := ev["args"].(map[string]any)
			if !ok || len(args) == 0 {
				t.Errorf("event %d: counter without args", i)
			}
			for k, v := range args {
				if _, ok := v.(json.Number); !ok {
					t.Errorf("event %d: counter arg %s = %v, not a number", i, k, v)
				}
			}
		default:
			t.Errorf("event %d: unexpected phase %q", i, ph)
		}
		used[tr] = true
		if id, ok := ev["bind_id"]; ok {
			if ph != "X" {
				t.Errorf("event %d: flow on a %q event (Perfetto binds flows to slices only)", i, ph)
			}
			key := fmt.Sprint(id)
			f := flows[key]
			if f == nil {
				f = &flow{}
				flows[key] = f
			}
			in, out := ev["flow_in"] == true, ev["flow_out"] == true
			switch {
			case in && out:
				f.steps++
			case out:
				f.starts++
			case in:
				f.ends++
			default:
				t.Errorf("event %d: bind_id without flow_in/flow_out", i)
			}
		}
	}
	for tr := range used {
		if !procNamed[tr.pid] {
			t.Errorf("pid %d has no process_name", tr.pid)
		}
		if !threadNamed[tr] {
			t.Errorf("pid %d tid %d has no thread_name", tr.pid, tr.tid)
		}
	}
	for id, f := range flows {
		if f.starts != 1 || f.ends != 1 {
			t.Errorf("flow %s: %d starts, %d ends, %d steps; want 1 start and 1 end", id, f.starts, f.ends, f.steps)
		}
	}
	// Device tracks must nest (host tracks come from real call scopes).
	for tr, ss := range slices {
		if tr.pid < devicePIDBase-1 {
			continue
		}
		for a := range ss {
			for b := range ss {
				x, y := ss[a], ss[b]
				if a != b && x.start < y.start && y.start < x.end && x.end < y.end {
					t.Errorf("pid %d tid %d: slices [%d,%d] and [%d,%d] overlap without nesting", tr.pid, tr.tid, x.start, x.end, y.start, y.end)
				}
			}
		}
	}
	return doc
}

func sampleSource(t *testing.T) (EventSource, *Stats) {
	t.Helper()
	return fileSource(t, "sample.json")
}

func fileSource(t *testing.T, name string) (EventSource, *Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var st Stats
	return SeekerSource(f, Options{File: name}, &st), &st
}

func bytesSource(b []byte) EventSource {
	return SeekerSource(bytes.NewReader(b), Options{File: "trace"}, nil)
}

func eventsByName(doc chromeDoc, name string) []map[string]any {
	var out []map[string]any
	for _, ev := range doc.TraceEvents {
		if ev["name"] == name {
			out = append(out, ev)
		}
	}
	return out
}

func TestExportChromeSample(t *testing.T) {
	src, _ := sampleSource(t)
	var buf bytes.Buffer
	km, err := kernelmap.ReadFile(filepath.Join("testdata", "sample_kernel_id.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w Warnings
	st, err := ExportChrome(&buf, src, ChromeOptions{Kernels: km, Source: "sample.json", Warnings: &w})
	if err != nil {
		t.Fatal(err)
	}
	doc := validateChrome(t, buf.Bytes())

	// 42 events: 2 IdentifyThread become metadata, 3 MemoryStats
	// counters, 37 host slices and instants.
	if st.HostEvents != 37 {
		t.Errorf("host events = %d, want 37", st.HostEvents)
	}
	// One kernel, the H2D upload, the D2H read-back and the internal
	// code-load copy reach the device.
	if st.DeviceSpans != 4 {
		t.Errorf("device spans = %d, want 4", st.DeviceSpans)
	}
	if len(st.Devices) != 1 || !st.Devices[0].Aligned {
		t.Fatalf("devices = %+v, want device 0 aligned (the sample's sandwiches hold)", st.Devices)
	}
	k := eventsByName(doc, "mul_mat_f32")
	if len(k) != 1 {
		t.Fatalf("kernel span: %v", k)
	}
	// exec 1,732,655 cycles @ 1000 MHz.
	if got := fmt.Sprint(k[0]["dur"]); got != "1732.655" {
		t.Errorf("kernel dur = %s µs, want 1732.655", got)
	}
	if k[0]["pid"] != json.Number("100") {
		t.Errorf("kernel span pid = %v, want 100", k[0]["pid"])
	}
	// The device span lies inside its host sandwich: after CommandSent
	// (1156.9 µs after the first event) and before ResponseReceived
	// (2921.7 µs).
	ts, _ := strconv.ParseFloat(fmt.Sprint(k[0]["ts"]), 64)
	dur, _ := strconv.ParseFloat(fmt.Sprint(k[0]["dur"]), 64)
	if ts < 1156.9 || ts+dur > 2921.7 {
		t.Errorf("aligned kernel span [%v, %v] outside its host sandwich [1156.9, 2921.7]", ts, ts+dur)
	}
	// launch → device → dispatch for the kernel and the two memcpys, and
	// device → dispatch for the code-load copy (it has no API event).
	if st.Flows != 4 {
		t.Errorf("flows = %d, want 4", st.Flows)
	}
	if got := len(eventsByName(doc, "device 0 memory")); got != 3 || st.Counters != 3 {
		t.Errorf("memory counters = %d (stats %d), want 3", got, st.Counters)
	}
	if names := threadNames(doc, hostPID); !equalStrings(names, []string{
		"main", "dma-pool", "Host Runtime Device 0 command sender", "Host Runtime Device 0 response receiver", "callback"}) {
		t.Errorf("host thread names = %q", names)
	}
	if names := threadNames(doc, devicePIDBase); !equalStrings(names, []string{"compute", "DMA H2D", "DMA D2H"}) {
		t.Errorf("device thread names = %q", names)
	}
	if w.Len() != 0 {
		t.Errorf("warnings: %v", w.List())
	}
}

func threadNames(doc chromeDoc, pid int) []string {
	var out []string
	for _, ev := range doc.TraceEvents {
		if ev["ph"] == "M" && ev["name"] == "thread_name" && ev["pid"] == json.Number(strconv.Itoa(pid)) {
			out = append(out, ev["args"].(map[string]any)["name"].(string))
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestExportChromeDeviceTime(t *testing.T) {
	src, _ := sampleSource(t)
	var buf bytes.Buffer
	st, err := ExportChrome(&buf, src, ChromeOptions{DeviceTime: true})
	if err != nil {
		t.Fatal(err)
	}
	doc := validateChrome(t, buf.Bytes())
	if st.Devices[0].Aligned {
		t.Fatalf("device aligned despite DeviceTime")
	}
	var pname string
	for _, ev := range doc.TraceEvents {
		if ev["ph"] == "M" && ev["name"] == "process_name" && ev["pid"] == json.Number("100") {
			pname = ev["args"].(map[string]any)["name"].(string)
		}
	}
	if !strings.Contains(pname, "device time") {
		t.Errorf("device process name %q does not say it is on device time", pname)
	}
	// Device time starts at the first dispatch: the earliest span is at 0.
	min := -1.0
	for _, ev := range doc.TraceEvents {
		if ev["cat"] == "device" {
			ts, _ := strconv.ParseFloat(fmt.Sprint(ev["ts"]), 64)
			if min < 0 || ts < min {
				min = ts
			}
		}
	}
	if min != 0 {
		t.Errorf("first device span at %v µs, want 0", min)
	}
}

// A crashed run's trace (cut mid-event) still exports to a valid document
// with what was decoded; launches without a response have no device span.
func TestExportChromeTruncated(t *testing.T) {
	src, dst := fileSource(t, "truncated.json")
	var buf bytes.Buffer
	st, err := ExportChrome(&buf, src, ChromeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !dst.Truncated {
		t.Fatalf("truncated.json not reported as truncated: %+v", dst)
	}
	validateChrome(t, buf.Bytes())
	if st.HostEvents == 0 {
		t.Errorf("nothing exported from a truncated trace")
	}
}

// Generated traces: many launches on several devices, event ids that
// wrap, and overlapping device spans (the generator does not serialise
// commands) must still give a valid, nested, fully linked document.
func TestExportChromeGenerated(t *testing.T) {
	tests := []struct {
		name string
		o    GenOptions
	}{
		{"one device", GenOptions{Ops: 300, Seed: 1}},
		{"two devices wrapping ids", GenOptions{Ops: 400, Devices: 2, Seed: 2, FirstID: 65000}},
		{"truncated", GenOptions{Ops: 200, Seed: 3, NoClose: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var trace bytes.Buffer
			gr, err := Generate(&trace, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			var w Warnings
			st, err := ExportChrome(&buf, bytesSource(trace.Bytes()), ChromeOptions{Kernels: kernelmap.New(gr.Kernels...), Warnings: &w})
			if err != nil {
				t.Fatal(err)
			}
			doc := validateChrome(t, buf.Bytes())
			// Every launch and copy reached the device and was dispatched:
			// one span and one flow each.
			want := gr.Launches + gr.H2D + gr.D2H
			if st.DeviceSpans != want || st.Flows != want {
				t.Errorf("spans %d flows %d, want %d each (launches %d, copies %d)", st.DeviceSpans, st.Flows, want, gr.Launches, gr.H2D+gr.D2H)
			}
			wantDevs := max(tt.o.Devices, 1)
			if len(st.Devices) != wantDevs {
				t.Errorf("devices: %+v", st.Devices)
			}
			// The generator's device clock does not follow host time, so
			// the sandwich check must refuse to align and say why.
			for _, d := range st.Devices {
				if d.Aligned || !strings.Contains(d.Note, "clocks disagree") {
					t.Errorf("device %d: aligned %v, note %q", d.ID, d.Aligned, d.Note)
				}
			}
			kernels := 0
			for _, ev := range doc.TraceEvents {
				if ev["cat"] == "device" && ev["args"].(map[string]any)["kernel"] != nil {
					kernels++
				}
			}
			if kernels != gr.Launches {
				t.Errorf("kernel spans %d, want %d", kernels, gr.Launches)
			}
		})
	}
}

func TestExportChromeMalformed(t *testing.T) {
	var buf bytes.Buffer
	_, err := ExportChrome(&buf, bytesSource([]byte(`{"value0": {"type": 5}}`)), ChromeOptions{})
	if err == nil {
		t.Fatal("no error for a malformed trace")
	}
	if _, ok := err.(interface{ InputError() }); !ok {
		t.Errorf("error %v (%T) is not an input error", err, err)
	}
}

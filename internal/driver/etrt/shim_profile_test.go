//go:build etrtfake && cgo && linux

package etrt

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// traceEvent is the part of a runtime trace event the tests read.
type traceEvent struct {
	Type  string `json:"type"`
	Class string `json:"class"`
	TS    struct {
		Since struct {
			Count int64 `json:"count"`
		} `json:"time_since_epoch"`
	} `json:"timeStamp"`
	Thread string `json:"thread_id"`
	Extra  []struct {
		Key   string `json:"key"`
		Value struct {
			Index int             `json:"index"`
			Data  json.RawMessage `json:"data"`
		} `json:"value"`
	} `json:"extra"`
}

// num returns a numeric extra, or -1.
func (e traceEvent) num(key string) int64 {
	for _, x := range e.Extra {
		if x.Key == key {
			v, err := strconv.ParseInt(string(x.Value.Data), 10, 64)
			if err != nil {
				return -1
			}
			return v
		}
	}
	return -1
}

// readTrace decodes a runtime trace as the format says it must be read:
// one object, keys value0, value1, ... in order.
func readTrace(t *testing.T, path string) []traceEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("trace starts with %v, %v", tok, err)
	}
	var evs []traceEvent
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("event %d: %v", len(evs), err)
		}
		if want := "value" + strconv.Itoa(len(evs)); tok != want {
			t.Fatalf("key %v, want %s", tok, want)
		}
		var e traceEvent
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("event %d: %v", len(evs), err)
		}
		evs = append(evs, e)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		t.Fatalf("trace ends with %v, %v", tok, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("data after the root object: %v", err)
	}
	return evs
}

func TestShimProfiler(t *testing.T) {
	dev, _, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	pr := dev.(driver.Profiler)
	ctx := context.Background()
	dir := t.TempDir()
	if err := pr.StartProfile(ctx, filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("StartProfile into a missing directory = %v", err)
	}
	if err := pr.StartProfile(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := pr.StartProfile(ctx, dir); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second StartProfile = %v", err)
	}
	exercise(t, dev) // malloc, write, read, load, one launch, sync, free
	k, _ := dev.LoadKernel(ctx, "k2", sysemuKernelELF())
	p, _ := dev.Malloc(context.Background(), 128, 0)
	if err := dev.Write(ctx, p, make([]byte, 128)); err != nil {
		t.Fatal(err)
	}
	if err := dev.Launch(ctx, k, make([]byte, 64), driver.LaunchOptions{Barrier: true}); err != nil {
		t.Fatal(err)
	}
	// Not synced: StopProfile waits, so the launch's response is traced.
	if err := pr.StopProfile(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pr.StopProfile(ctx); err != nil {
		t.Errorf("second StopProfile = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, driver.ProfileTraceFile+driver.PartialTraceSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial trace is left behind: %v", err)
	}
	evs := readTrace(t, filepath.Join(dir, driver.ProfileTraceFile))

	if evs[0].Class != "StartProfiling" || evs[0].num("version") != 3 || evs[len(evs)-1].Class != "EndProfiling" {
		t.Errorf("trace from %s to %s", evs[0].Class, evs[len(evs)-1].Class)
	}
	count := map[string]int{}
	launches := map[int64]bool{}   // KernelLaunch event ids
	responses := map[int64]int64{} // ResponseReceived event id -> rsp_type
	sent := map[int64]int64{}      // CommandSent event id -> parent
	for i, e := range evs {
		count[e.Class]++
		switch e.Class {
		case "KernelLaunch":
			launches[e.num("event")] = true
			if e.Type != "Complete" || e.num("kernel_id") < 0 {
				t.Errorf("event %d: %+v", i, e)
			}
		case "ResponseReceived":
			responses[e.num("event")] = e.num("rsp_type")
			if e.num("device_cmd_exec_dur") <= 0 || e.num("device_cmd_start_ts") <= 0 {
				t.Errorf("event %d: no device cycles: %+v", i, e)
			}
		case "CommandSent":
			sent[e.num("event")] = e.num("parent_id")
		case "GetDeviceProperties":
			var props struct {
				Frequency int `json:"frequency"`
			}
			json.Unmarshal(e.Extra[1].Value.Data, &props)
			if e.Extra[1].Key != "device_properties" || e.Extra[1].Value.Index != 7 || props.Frequency != 1000 {
				t.Errorf("event %d: device properties %+v", i, e.Extra)
			}
		}
		if i > 0 && e.TS.Since.Count <= 0 {
			t.Errorf("event %d: time stamp %d", i, e.TS.Since.Count)
		}
	}
	want := map[string]int{"StartProfiling": 1, "GetDevices": 1, "GetDeviceProperties": 1, "KernelLaunch": 2,
		"MemcpyHostToDevice": 2, "MemcpyDeviceToHost": 1, "LoadCode": 2, "MallocDevice": 2, "FreeDevice": 1,
		"IdentifyThread": 2, "EndProfiling": 1}
	for class, n := range want {
		if count[class] != n {
			t.Errorf("%d %s events, want %d (all: %v)", count[class], class, n, count)
		}
	}
	for id := range launches {
		if rt, ok := responses[id]; !ok || rt != 2 || sent[id] != id {
			t.Errorf("launch %d: response type %d (%v), command parent %d", id, rt, ok, sent[id])
		}
	}
	if len(responses) != 5 { // 2 launches, 3 copies
		t.Errorf("%d responses, want 5", len(responses))
	}
}

func TestShimProfilerStoppedByClose(t *testing.T) {
	dev, _, err := openFakeShim(t, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := dev.(driver.Profiler).StartProfile(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed without StopProfile: complete, but under its partial name.
	evs := readTrace(t, filepath.Join(dir, driver.ProfileTraceFile+driver.PartialTraceSuffix))
	if evs[len(evs)-1].Class != "EndProfiling" {
		t.Errorf("last event %s", evs[len(evs)-1].Class)
	}
}

// TestWorkerProfileCrash: a runtime abort while profiling gives a worker
// error naming the shim's last message and the signal, not a register
// line of the Go crash dump, and leaves only a partial trace.
func TestWorkerProfileCrash(t *testing.T) {
	ctx := context.Background()
	dev, err := OpenWorker(ctx, sysemuWorker(t, "crash"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dir := t.TempDir()
	if err := dev.StartProfile(ctx, dir); err != nil {
		t.Fatal(err)
	}
	k, err := dev.LoadKernel(ctx, "k", sysemuKernelELF())
	if err != nil {
		t.Fatal(err)
	}
	err = dev.Launch(ctx, k, nil, driver.LaunchOptions{})
	var we *WorkerError
	if !errors.As(err, &we) {
		t.Fatalf("Launch = %v, want a *WorkerError", err)
	}
	if we.Reason != "fake shim: scripted crash in kernelLaunch" || we.Signal != "SIGABRT: abort" {
		t.Errorf("reason %q, signal %q; output:\n%s", we.Reason, we.Signal, we.Stderr)
	}
	if !strings.HasPrefix(err.Error(), "etrt worker died during launch (exit status 2): fake shim: scripted crash in kernelLaunch; SIGABRT: abort; logs in ") {
		t.Errorf("message = %q", err)
	}
	if strings.Contains(we.Output, "goroutine") || !strings.Contains(we.Stderr, "goroutine") {
		t.Errorf("output %q\nstderr %q", we.Output, we.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, driver.ProfileTraceFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a crashed run left a complete-looking trace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, driver.ProfileTraceFile+driver.PartialTraceSuffix)); err != nil {
		t.Errorf("no partial trace: %v", err)
	}
	if err := dev.StopProfile(ctx); err != we {
		t.Errorf("StopProfile after the crash = %v, want the same error", err)
	}
}

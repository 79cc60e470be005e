//go:build etrtfake && cgo && linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver/etrt"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// runFakeCards runs et with the pcie and sysemu workers on the fake shim
// reporting cards devices, and --device all listing list.
func runFakeCards(t *testing.T, cards string, list []int, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	f, out, errOut := testFactory(nil)
	root := newRootCmd(f)
	replaceCmd(root, newRunOpCmd(f, func(ctx context.Context, o *runOpOptions) error {
		o.Worker = func(w *etrt.WorkerOptions) {
			w.Exe = os.Args[0]
			w.Args = []string{"-test.run=^TestWorkerHelperProcess$", "--", etrt.WorkerCommand, "--backend", w.Backend}
			w.Env = []string{"ET_TEST_WORKER_HELPER=1", "ETSHIM_FAKE_FAULT=stream_error", "ETSHIM_FAKE_DEVICES=" + cards}
		}
		o.listDevices = func(context.Context) ([]int, error) { return list, nil }
		return runOpRun(ctx, f, o)
	}))
	code := executeRoot(context.Background(), f, root, args)
	return code, out.String(), errOut.String()
}

// TestRunOpDeviceListFake: --device 0,1 and --device all on several fake
// cards open one worker per card, spread the cases over them, and give the
// report one card gives (the fake's stream error on every case, in input
// order).
func TestRunOpDeviceListFake(t *testing.T) {
	kernels := t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "el_map_f32", "scale_f32", "uberkernel")
	files := []string{"-f", "../../testcases/binary.yaml", "-f", "../../testcases/norm.yaml"}
	base := append([]string{"run-op", "--backend", "pcie", "--kernels", kernels, "-o", "json", "-v"}, files...)
	report := func(out string) runner.Report {
		var r runner.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r
	}
	code, out, errOut := runFakeCards(t, "3", nil, append(base, "--device", "2")...)
	if code != exitNegative {
		t.Fatalf("one card: exit %d: %s", code, errOut)
	}
	one := report(out)
	if one.Device != "et2" || len(one.Faults) != 2 {
		t.Fatalf("one card: %+v", one)
	}
	for _, tt := range []struct {
		name   string
		device string
		list   []int
		opened []string
	}{
		{"list", "0,2", nil, []string{"opening pcie device 0 ", "opening pcie device 2 "}},
		{"all", "all", []int{0, 1, 2}, []string{"opening pcie device 0 ", "opening pcie device 1 "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "run")
			code, out, errOut := runFakeCards(t, "3", tt.list, append(base, "--device", tt.device, "--run-dir", runDir)...)
			if code != exitNegative {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := report(out)
			if got.Device != "2 pcie devices" {
				t.Errorf("device %q", got.Device)
			}
			got.Device = one.Device
			if !reflect.DeepEqual(got.Faults, one.Faults) || !reflect.DeepEqual(got.Results, one.Results) {
				t.Errorf("report on two cards differs from one card's:\n%+v\n%+v", got, one)
			}
			// Two cases: two workers, not three (no idle card).
			for _, want := range tt.opened {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if strings.Count(errOut, "opening pcie device") != 2 {
				t.Errorf("stderr:\n%s", errOut)
			}
			for _, j := range []string{"job0", "job1"} {
				if _, err := os.Stat(filepath.Join(runDir, j, "worker.log")); err != nil {
					t.Errorf("%s: %v", j, err)
				}
			}
		})
	}
	t.Run("no such card", func(t *testing.T) {
		code, _, errOut := runFakeCards(t, "2", nil, append(base, "--device", "0,5")...)
		if code != exitUnavailable || !strings.Contains(errOut, "pcie device 5: the runtime has 2 device(s)") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("all without cards", func(t *testing.T) {
		code, _, errOut := runFakeCards(t, "2", []int{}, append(base, "--device", "all")...)
		if code != exitUnavailable || !strings.Contains(errOut, "--device all: no usable pcie device") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("two emulators", func(t *testing.T) {
		prefix := fakeInstall(t)
		code, out, errOut := runFakeCards(t, "1", nil, append([]string{"run-op", "--backend", "sysemu", "--prefix", prefix, "--kernels", kernels,
			"--device", "0,1", "-o", "json"}, files...)...)
		if code != exitNegative {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		got := report(out)
		if got.Device != "2 sysemu devices" || len(got.Faults) != 2 || got.Faults[0].Case != "binary" || got.Faults[1].Case != "norm" {
			t.Errorf("%+v", got)
		}
	})
}

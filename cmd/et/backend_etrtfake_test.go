//go:build etrtfake && cgo && linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver/etrt"
	"github.com/ainekko/et/internal/kernelrun"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

// These tests run et's commands on the sysemu backend of the fake runtime
// shim (go test -tags etrtfake): the worker is this test binary
// re-executed as "et __worker" (TestWorkerHelperProcess), and faults are
// scripted with ETSHIM_FAKE_FAULT in the worker's environment.

// fakeWorker returns a hook that makes the worker this test binary with
// the given fake-shim faults.
func fakeWorker(faults string) func(*etrt.WorkerOptions) {
	return func(o *etrt.WorkerOptions) {
		o.Exe = os.Args[0]
		o.Args = []string{"-test.run=^TestWorkerHelperProcess$", "--", etrt.WorkerCommand, "--backend", o.Backend}
		o.Env = []string{"ET_TEST_WORKER_HELPER=1", "ETSHIM_FAKE_FAULT=" + faults}
	}
}

// runFake runs et with the sysemu worker hooked to the fake shim.
func runFake(t *testing.T, faults string, args ...string) (int, string, string) {
	t.Helper()
	return runFakeCtx(context.Background(), t, faults, args...)
}

// runFakeCtx is runFake under ctx (cancel it for a Ctrl-C).
func runFakeCtx(ctx context.Context, t *testing.T, faults string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir()) // run directories kept on failure
	f, out, errOut := testFactory(nil)
	root := newRootCmd(f)
	hook := fakeWorker(faults)
	replaceCmd(root, newRunKernelCmd(f, func(ctx context.Context, o *runKernelOptions) error {
		o.Target.Worker = hook
		return runKernelRun(ctx, f, o)
	}))
	replaceCmd(root, newRunOpCmd(f, func(ctx context.Context, o *runOpOptions) error {
		o.Worker = hook
		return runOpRun(ctx, f, o)
	}))
	replaceCmd(root, newDevicesCmd(f, func(ctx context.Context, o *devicesOptions) error {
		o.BootTarget.Worker = hook
		return devicesRun(ctx, o)
	}))
	code := executeRoot(ctx, f, root, args)
	return code, out.String(), errOut.String()
}

// fakeInstall writes a sane install and returns its prefix.
func fakeInstall(t *testing.T) string {
	t.Helper()
	prefix := t.TempDir()
	sysemutest.WriteInstall(t, prefix)
	return prefix
}

func TestRunKernelSysemuFake(t *testing.T) {
	prefix := fakeInstall(t)
	elf := writeKernelFile(t, "add_one")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.bin")
	os.WriteFile(in, []byte{1, 2, 3, 4, 5}, 0o644)
	base := []string{"run-kernel", elf, "--backend", "sysemu", "--prefix", prefix, "--buf", "x=256:pattern", "--buf", "y=64:" + in,
		"--arg", "u64:@x", "--arg", "u64:@y", "--arg", "u32:64"}

	t.Run("success with dumps", func(t *testing.T) {
		runDir := filepath.Join(t.TempDir(), "run")
		xd, yd := filepath.Join(dir, "x.bin"), filepath.Join(dir, "y.npy")
		code, out, errOut := runFake(t, "", append(base, "--dump", "x="+xd, "--dump", "y="+yd, "--run-dir", runDir,
			"--shire-mask", "0x1", "-o", "json")...)
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		var doc kernelrun.Report
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Status != "ok" || doc.Device != "sysemu0" || doc.ArgsBytes != 20 || len(doc.Buffers) != 2 || doc.ShireMask != 1 {
			t.Errorf("doc %+v", doc)
		}
		x, _ := os.ReadFile(xd)
		if len(x) != 256 || x[4] != 1 || x[252] != 63 {
			t.Errorf("x dump = %v", x)
		}
		y, _ := os.ReadFile(yd)
		if !bytes.HasSuffix(y, append([]byte{1, 2, 3, 4, 5}, make([]byte, 59)...)) || !bytes.HasPrefix(y, []byte("\x93NUMPY")) {
			t.Errorf("y dump = %q", y)
		}
		for _, log := range []string{"sysemu.log", "spio_uart0_tx.log", "worker.log"} {
			if _, err := os.Stat(filepath.Join(runDir, log)); err != nil {
				t.Errorf("run dir lacks %s: %v", log, err)
			}
		}
	})
	t.Run("hang times out with the log tails", func(t *testing.T) {
		code, out, errOut := runFake(t, "hang_wait", append(base, "--timeout", "2s")...)
		if code != exitTimeout || out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
		}
		for _, want := range []string{"et: spio_uart0_tx.log (last 2 lines):", "    MAIN:[txt]MemShire Configure",
			"et: sysemu.log (last", "timed out during", "worker killed", "logs kept in"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
	})
	t.Run("boot hangs", func(t *testing.T) {
		code, _, errOut := runFake(t, "hang_open", append(base, "--timeout", "2s")...)
		if code != exitTimeout || !strings.Contains(errOut, "timed out during open") || !strings.Contains(errOut, "MAIN:[txt]Configure NOC") {
			t.Errorf("exit %d, stderr %s", code, errOut)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		code, out, errOut := runFake(t, "stream_error", append(base, "-o", "json")...)
		if code != exitNegative {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		var doc struct {
			Status string `json:"status"`
			Faults []struct {
				Code     string           `json:"code"`
				Contexts []map[string]any `json:"contexts"`
			} `json:"faults"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Status != "fault" || len(doc.Faults) != 1 || doc.Faults[0].Code != "KernelLaunchException" || len(doc.Faults[0].Contexts) != 2 {
			t.Fatalf("doc %+v", doc)
		}
		c := doc.Faults[0].Contexts[1]
		if c["hart"] != 1.0 || c["cause"] != 15.0 || c["epc"] != float64(0x8005b39020) || c["tval"] != float64(0xdead0040) {
			t.Errorf("context %v", c)
		}
		if !strings.Contains(errOut, "sysemu logs kept in") {
			t.Errorf("stderr %q", errOut)
		}
	})
	t.Run("stream error table", func(t *testing.T) {
		code, out, _ := runFake(t, "stream_error", base...)
		if code != exitNegative || !strings.Contains(out, "KernelLaunchException") || !strings.Contains(out, "0x8005b39010") ||
			!strings.Contains(out, "U-mode exception: load access fault") {
			t.Errorf("exit %d, table:\n%s", code, out)
		}
	})
	t.Run("worker crash", func(t *testing.T) {
		// A dead worker is no verdict: exit 5, never 1 (issue 33).
		code, out, errOut := runFake(t, "crash", base...)
		if code != exitInternal || out != "" {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
		if !strings.Contains(errOut, "etrt worker died during launch") || !strings.Contains(errOut, "scripted crash in kernelLaunch") {
			t.Errorf("stderr %s", errOut)
		}
	})
	t.Run("broken install is not booted", func(t *testing.T) {
		code, _, errOut := runFake(t, "", "run-kernel", elf, "--backend", "sysemu", "--prefix", t.TempDir())
		if code != exitUnavailable || !strings.Contains(errOut, "not booting") || !strings.Contains(errOut, "firmware.bl2") {
			t.Errorf("exit %d, stderr %s", code, errOut)
		}
	})
}

func TestRunOpSysemuFake(t *testing.T) {
	prefix := fakeInstall(t)
	kernels := t.TempDir()
	t.Run("missing kernels are listed before boot", func(t *testing.T) {
		sysemutest.WriteKernels(t, kernels, "cont_f32")
		code, out, errOut := runFake(t, "hang_open", "run-op", "-f", "../../testcases/norm.yaml", "--backend", "sysemu",
			"--prefix", prefix, "--kernels", kernels, "--timeout", "1m")
		if code != exitUnavailable || out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
		}
		if !strings.Contains(errOut, "kernel ELF(s) missing from "+kernels+", nothing booted: ") || !strings.Contains(errOut, "rms_norm_f32.elf") {
			t.Errorf("stderr %s", errOut)
		}
	})
	t.Run("stream errors are decoded", func(t *testing.T) {
		sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "el_map_f32", "scale_f32", "uberkernel")
		code, out, errOut := runFake(t, "stream_error", "run-op", "rms_norm", "--src", "x=f32:64x2", "--backend", "sysemu",
			"--prefix", prefix, "--kernels", kernels, "-o", "json")
		if code != exitNegative {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		var doc runner.Report
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Backend != "sysemu" || len(doc.Faults) != 1 || len(doc.Faults[0].Errors) != 1 {
			t.Fatalf("doc %+v", doc)
		}
		e := doc.Faults[0].Errors[0]
		if e.Code != "KernelLaunchException" || len(e.Contexts) != 2 || e.Contexts[0].Cause != 5 || e.Contexts[0].TVal != 0xdead0000 {
			t.Errorf("fault %+v", e)
		}
	})
}

// tempRunDirs lists the temporary run directories left in $TMPDIR.
func tempRunDirs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "et-sysemu-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A temporary run directory is kept only after a timeout, a crash, a
// failed boot, a stream error or an interrupted call (docs/etrt.md), not
// after a plain out-of-tolerance verdict.
func TestRunOpSysemuFakeRunDir(t *testing.T) {
	prefix := fakeInstall(t)
	kernels := t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "el_map_f32", "scale_f32", "uberkernel")
	args := []string{"run-op", "rms_norm", "--src", "x=f32:64x2", "--backend", "sysemu", "--prefix", prefix, "--kernels", kernels}
	t.Run("out of tolerance: removed", func(t *testing.T) {
		// The fake shim runs no kernel: dst keeps its zeros, far from
		// the reference.
		code, out, errOut := runFake(t, "", args...)
		if code != exitNegative || !strings.Contains(out, "FAIL") {
			t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
		}
		if strings.Contains(errOut, "logs kept") {
			t.Errorf("stderr %q names a kept run directory", errOut)
		}
		if left := tempRunDirs(t); len(left) != 0 {
			t.Errorf("temporary run directories left after a plain NMSE failure: %v", left)
		}
	})
	t.Run("stream error: kept", func(t *testing.T) {
		code, _, errOut := runFake(t, "stream_error", args...)
		if code != exitNegative || !strings.Contains(errOut, "sysemu logs kept in") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		if left := tempRunDirs(t); len(left) != 1 {
			t.Errorf("temporary run directories after a stream error: %v, want one", left)
		}
	})
}

// Ctrl-C during a run says "interrupted" (exit 130), not Go's "context
// canceled".
func TestRunOpSysemuFakeInterrupt(t *testing.T) {
	prefix := fakeInstall(t)
	kernels := t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "el_map_f32", "scale_f32", "uberkernel")
	for _, faults := range []string{"hang_wait", "hang_open"} {
		t.Run(faults, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(time.Second, cancel)
			code, out, errOut := runFakeCtx(ctx, t, faults, "run-op", "rms_norm", "--src", "x=f32:64x2", "--backend", "sysemu",
				"--prefix", prefix, "--kernels", kernels)
			if code != exitInterrupted || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
			}
			if !strings.Contains(errOut, "interrupted") || strings.Contains(errOut, "context canceled") {
				t.Errorf("stderr %q, want \"interrupted\" and no \"context canceled\"", errOut)
			}
		})
	}
}

func TestDevicesBootFake(t *testing.T) {
	prefix := fakeInstall(t)
	code, out, errOut := runFake(t, "", "devices", "--kind", "sysemu", "--prefix", prefix, "--boot", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc devicesDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 1 {
		t.Fatalf("devices %+v", doc.Devices)
	}
	d := doc.Devices[0]
	if !d.Booted || d.Status != "ready" || d.Properties == nil || d.Properties.FrequencyMHz != 1000 || len(d.AssumedProperties) != 0 {
		t.Errorf("device %+v", d)
	}
	t.Run("boot timeout", func(t *testing.T) {
		code, out, errOut := runFake(t, "hang_open", "devices", "--kind", "sysemu", "--prefix", prefix, "--boot", "--timeout", "2s")
		if code != exitTimeout || !strings.Contains(out, "boot-failed") || !strings.Contains(errOut, "--boot: etrt worker timed out during open") {
			t.Errorf("exit %d, stdout %s, stderr %s", code, out, errOut)
		}
	})
}

func TestRunOpJobsSysemuFake(t *testing.T) {
	// Two emulators (fake sysemu workers), each with its own run
	// directory; the faults of the cases come back in input order.
	prefix := fakeInstall(t)
	kernels := t.TempDir()
	sysemutest.WriteKernels(t, kernels, "rms_norm_f32", "rms_norm_mul_f32", "norm_f32", "el_map_f32", "scale_f32", "uberkernel")
	runDir := filepath.Join(t.TempDir(), "run")
	code, out, errOut := runFake(t, "stream_error", "run-op", "-f", "../../testcases/binary.yaml", "-f", "../../testcases/norm.yaml",
		"--backend", "sysemu", "--prefix", prefix, "--kernels", kernels, "--run-dir", runDir, "--jobs", "2", "-o", "json")
	if code != exitNegative {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc runner.Report
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Device != "2 sysemu devices" || len(doc.Faults) != 2 || doc.Faults[0].Case != "binary" || doc.Faults[1].Case != "norm" {
		t.Fatalf("doc %+v", doc)
	}
	for _, j := range []string{"job0", "job1"} {
		if _, err := os.Stat(filepath.Join(runDir, j, "worker.log")); err != nil {
			t.Errorf("%s: %v", j, err)
		}
	}
}

//go:build sysemu

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/runner"
)

// run-op verdicts on the real emulator and the real ggml-et kernels, run
// as the real-emulator suite runs everything (sysemu_e2e_test.go: ET_BIN,
// ET_TOOLCHAIN, GGML_ET_KERNELS_PATH; the tests skip without them).

// runSysemu runs et run-op on the sysemu backend and returns the exit
// code, the decoded JSON document and stderr.
func runSysemu(t *testing.T, args ...string) (int, runner.Report, string) {
	t.Helper()
	s := needStack(t)
	r := s.et(t, 20*time.Minute, append([]string{"run-op", "--backend", "sysemu", "--timeout", "15m", "-o", "json"}, args...)...)
	var doc runner.Report
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d, output is not JSON: %v\n%s\nstderr: %s", r.code, err, r.out, r.errOut)
	}
	for _, res := range doc.Results {
		t.Logf("%s/%s %s %s: %s nmse %.3g (max %.3g) drift %.3g", res.Case, res.Node, res.Op, res.Kernel, res.Status, res.NMSE, res.MaxNMSE, res.DriftNMSE)
	}
	return r.code, doc, r.errOut
}

func testcase(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "testcases", name))
	return p
}

// ggml-et fails RMS_NORM in place on the emulator (test-backend-ops:
// ERR = 22.6 > 1e-7): rms_norm_f32 reading and writing the same buffer.
// et launches it with the same aliasing, so it fails too; in place off, it
// passes.
func TestSysemuRMSNormInPlace(t *testing.T) {
	const str = "RMS_NORM(type=f32,ne=[64,5,4,3],v=0,eps=0.000001,inplace="
	for _, uber := range [][]string{nil, {"--uberkernel"}} {
		code, doc, errOut := runSysemu(t, append([]string{str + "0)"}, uber...)...)
		if code != 0 || len(doc.Results) != 1 || doc.Results[0].Status != "PASS" {
			t.Errorf("inplace=0 %v: exit %d %+v (%s), want PASS", uber, code, doc.Results, errOut)
		}
		code, doc, errOut = runSysemu(t, append([]string{str + "1)"}, uber...)...)
		if code != 1 || len(doc.Results) != 1 || doc.Results[0].Status != "FAIL" || doc.Results[0].NMSE < 1e-3 {
			t.Errorf("inplace=1 %v: exit %d %+v (%s), want FAIL like ggml-et", uber, code, doc.Results, errOut)
		}
	}
	// SCALE in place passes on ggml-et (test-backend-ops: OK) and on et.
	code, doc, errOut := runSysemu(t, "SCALE(type=f32,ne=[10,10,10,10],scale=2.000000,bias=1.000000,inplace=1)")
	if code != 0 || len(doc.Results) != 1 || doc.Results[0].Status != "PASS" {
		t.Errorf("SCALE inplace=1: exit %d %+v (%s), want PASS", code, doc.Results, errOut)
	}
}

// The small llama layer passes node by node: rope after the q8_0 mul_mat
// is judged on the mul_mat's device output (its drift is reported), and
// the fused mul_mat+add h at MUL_MAT's limit.
func TestSysemuLlamaLayerSmall(t *testing.T) {
	file := testcase("llama_layer_small.yaml")
	for _, uber := range []bool{false, true} {
		args := []string{"-f", file}
		if uber {
			args = append(args, "--uberkernel")
		}
		code, doc, errOut := runSysemu(t, args...)
		if code != 0 {
			t.Errorf("uberkernel=%v: exit %d: %s", uber, code, errOut)
		}
		seen := map[string]runner.Result{}
		for _, r := range doc.Results {
			seen[r.Node] = r
			if r.Status != "PASS" {
				t.Errorf("uberkernel=%v: %s %s: %s nmse %g (max %g)", uber, r.Node, r.Kernel, r.Status, r.NMSE, r.MaxNMSE)
			}
		}
		if h := seen["h"]; h.Fusion != "mul_mat+add" || h.MaxNMSE != 5e-4 {
			t.Errorf("uberkernel=%v: h fusion %q max_nmse %g, want mul_mat+add at 5e-4", uber, h.Fusion, h.MaxNMSE)
		}
		if qr := seen["qr"]; qr.Op != "rope" || qr.NMSE > 1e-7 || qr.DriftNMSE <= qr.NMSE {
			t.Errorf("uberkernel=%v: qr nmse %g drift %g: want rope within 1e-7 on its inputs, the mul_mat's error as drift", uber, qr.NMSE, qr.DriftNMSE)
		}
	}
}

// TestSysemuCaseList runs a file of test-backend-ops case strings
// (--cases) as one run on one emulator: every case has its verdict (the
// unsupported one FALLBACK), one device reports them, and --progress
// writes a line per finished case.
func TestSysemuCaseList(t *testing.T) {
	code, doc, errOut := runSysemu(t, "--cases", testcase("case-strings/llama_ops.txt"), "--progress")
	c := doc.Count()
	if code != 0 || c.Outputs != 5 || c.Pass != 4 || c.Fallback != 1 || doc.Device != "sysemu0" {
		t.Errorf("exit %d, device %q, counts %+v (stderr %s)", code, doc.Device, c, errOut)
	}
	for i := 1; i <= 5; i++ {
		if !strings.Contains(errOut, fmt.Sprintf("et: case %d/5 ", i)) {
			t.Errorf("no progress line for case %d: %s", i, errOut)
		}
	}
}

// TestSysemuProgressTerminal runs a case on sysemu with stderr an 80-column
// terminal (util-linux script's pty): the status line shows the boot, then
// the launch running (its kernel and node) after the case, cut to the
// width; nothing else reaches the terminal.
func TestSysemuProgressTerminal(t *testing.T) {
	s := needStack(t)
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) for a pty")
	}
	const str = "ADD(type=f32,ne=[4096,7,1,1],nr=[1,1,1,1],nf=1,perm1=0,src_overlap=0)"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qfec", "stty cols 80 rows 24; exec \"$ET_BIN\" run-op '"+str+"' --backend sysemu 2>&1 >/dev/null", "/dev/null")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ET_BIN="+s.bin, "ET_TOOLCHAIN="+s.prefix, "GGML_ET_KERNELS_PATH="+s.kernels, "TMPDIR="+dir, "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	term := string(out)
	for _, re := range []string{`\r\x1b\[Kbooting: spio_uart0: `, `\r\x1b\[Kcase 1/1 ADD\(type=f32,ne=[^\r]*…[^\r]*: launch 1/1 el_map_f32 \(`} {
		if !regexp.MustCompile(re).MatchString(term) {
			t.Errorf("the terminal lacks %s: %q", re, term)
		}
	}
	if !strings.HasSuffix(term, "\r\x1b[K") || strings.Contains(term, "\n") {
		t.Errorf("lines left on the terminal: %q", term)
	}
	for _, line := range strings.Split(term, "\r\x1b[K") {
		if n := len([]rune(line)); n > 79 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
}

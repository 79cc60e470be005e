//go:build sysemu

package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/runner"
)

// Which kernels honour a partial shire mask (docs/run-op-perf.md, "Shire
// masks"), kept true on the real emulator with the mask 0x2: one shire,
// not shire 0, so a kernel that indexes rows by absolute hart id has
// nothing to write. Every kernel the kernel catalog lets run on a partial
// mask must pass there as on the full mask; every one it keeps on all 32
// shires must fail or hang when forced onto it (else it moved lists and
// the refusal costs emulator time for nothing).
func TestSysemuShireMaskKernels(t *testing.T) {
	needStack(t)
	files, err := filepath.Glob(testcase("*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("testcases: %v %v", files, err)
	}
	args := []string{"--shire-mask", "0x2", "--expected-failures", testcase("expected-failures/sysemu.yaml")}
	for _, f := range files {
		if filepath.Base(f) != "llama_layer_4096.yaml" { // its kernels are in the others
			args = append(args, "-f", f)
		}
	}
	_, doc, errOut := runSysemu(t, args...)
	honoured := map[string]bool{}
	for _, r := range doc.Results {
		if r.Kernel == "" {
			continue // ran on the host
		}
		info, _ := kernelmap.LookupKernel(r.Kernel)
		if info.AllShires != "" {
			continue // launched on all 32 shires
		}
		honoured[r.Kernel] = true
		if r.Status != "PASS" && r.Status != "XFAIL" && r.Status != "XPASS" {
			t.Errorf("%s/%s: %s on shire mask 0x2: %s (nmse %g): it no longer honours a partial mask (add its AllShires reason)", r.Case, r.Node, r.Kernel, r.Status, r.NMSE)
		}
	}
	if len(honoured) < 35 {
		t.Errorf("only %d kernels ran on mask 0x2 (%v): %s", len(honoured), honoured, errOut)
	}

	// The kernels kept on all 32 shires, forced onto shire 1: wrong
	// output, or a launch that hangs (the watchdog stops it, exit 4).
	s := needStack(t)
	forced := func(t *testing.T, file string, extra ...string) etResult {
		t.Helper()
		return s.et(t, 10*time.Minute, append([]string{"run-op", "--backend", "sysemu", "-f", testcase(file),
			"--shire-mask", "0x2", "--force-shire-mask", "--timeout", "60s", "-o", "json"}, extra...)...)
	}
	wrong := map[string][]string{ // file: kernels that leave output unwritten
		"mul_mat.yaml": {"mul_mat_f32_matrix_engine", "mul_mat_f16_matrix_engine", "mul_mat_Q4_0_matrix_engine", "mul_mat_Q8_0", "mul_mat_Q4_0"},
		"conv.yaml":    {"conv_2d_f32_me"},
	}
	for file, kernels := range wrong {
		r := forced(t, file)
		var doc runner.Report
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatalf("%s: exit %d, output is not JSON: %v\n%s", file, r.code, err, r.errOut)
		}
		failed := map[string]bool{}
		for _, res := range doc.Results {
			if res.Status == "FAIL" {
				failed[res.Kernel] = true
			}
		}
		for _, k := range kernels {
			if !failed[k] {
				t.Errorf("%s forced onto shire mask 0x2 did not fail (%s): it may honour partial masks now; if so, drop its AllShires reason", k, file)
			}
		}
	}
	hangs := []struct {
		kernel, file string
		extra        []string
	}{
		{"rope_f32", "rope.yaml", nil},
		{"flash_attn_ext_f16_me", "flash_attn.yaml", nil},
		{"uberkernel", "binary.yaml", []string{"--uberkernel"}},
	}
	for _, h := range hangs {
		r := forced(t, h.file, h.extra...)
		if r.code != 4 || !strings.Contains(r.errOut, "sync after "+h.kernel) {
			t.Errorf("%s forced onto shire mask 0x2: exit %d, want the watchdog's 4 after it hangs at its barrier: %s", h.kernel, r.code, r.errOut)
		}
	}
	// Every kernel with an AllShires reason was forced above.
	var checked []string
	for _, ks := range wrong {
		checked = append(checked, ks...)
	}
	for _, h := range hangs {
		checked = append(checked, h.kernel)
	}
	for _, k := range kernelmap.Catalog {
		if k.AllShires != "" && !slices.Contains(checked, k.Name) {
			t.Errorf("%s needs all shires in the catalog but no case here forces it onto a partial mask", k.Name)
		}
	}
}

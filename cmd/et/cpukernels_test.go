package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/refmath"
)

// TestCPUKernelsEnv: ET_CPU_KERNELS=portable makes the reference math run
// the portable code alone; an unknown set is a usage error (exit 2) that
// names the variable and the sets.
func TestCPUKernelsEnv(t *testing.T) {
	native := refmath.Host()
	defer refmath.UseHost(native)
	code, _, errOut := runCLI(t, map[string]string{"ET_CPU_KERNELS": "sse9"}, "ops", "list")
	sets := map[string]string{"amd64": "native, avx512, avx2, portable", "arm64": "native, dotprod, neon, portable"}[runtime.GOARCH]
	if sets == "" {
		sets = "native, portable"
	}
	if code != exitUsage || !strings.Contains(errOut, `ET_CPU_KERNELS: unknown kernel set "sse9" (want one of `+sets+`)`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if refmath.Host() != native {
		t.Error("a refused set changed the kernels")
	}
	if code, _, errOut := runCLI(t, map[string]string{"ET_CPU_KERNELS": "portable"}, "ops", "list"); code != 0 {
		t.Fatalf("portable: exit %d, stderr %q", code, errOut)
	}
	if got := refmath.Host(); got != (refmath.Kernels{}) {
		t.Errorf("portable: kernels %+v, want none", got)
	}
}

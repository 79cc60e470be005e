package cpu

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestLimitArm64: the arm64 kernel sets keep what a machine of their class
// runs (neon: everything but SDOT) and refuse a CPU without it; on arm64
// they are the sets between native and portable.
func TestLimitArm64(t *testing.T) {
	all := Kernels{NEON: true, DotProd: true, SgemmR: 2, SgemmC: 2}
	if got, err := all.Limit("dotprod"); err != nil || got != all {
		t.Errorf("dotprod: %+v, %v", got, err)
	}
	want := Kernels{NEON: true, SgemmR: 2, SgemmC: 2}
	neon, err := all.Limit("neon")
	if err != nil || neon != want {
		t.Errorf("neon: %+v, %v; want %+v", neon, err, want)
	}
	if again, err := neon.Limit("neon"); err != nil || again != neon {
		t.Errorf("neon of neon: %+v, %v", again, err)
	}
	if _, err := neon.Limit("dotprod"); err == nil || !strings.Contains(err.Error(), "no arm64 dot product") {
		t.Errorf("dotprod on a NEON set: %v", err)
	}
	if _, err := (Kernels{}).Limit("neon"); err == nil || !strings.Contains(err.Error(), "no arm64 NEON") {
		t.Errorf("neon on the portable set: %v", err)
	}
	if got, err := all.Limit("portable"); err != nil || got != (Kernels{}) {
		t.Errorf("portable: %+v, %v", got, err)
	}
	if runtime.GOARCH == "arm64" {
		if !slices.Equal(KernelSets, []string{"native", "dotprod", "neon", "portable"}) {
			t.Errorf("KernelSets = %v", KernelSets)
		}
		if !host.NEON || host.SgemmR != 2 {
			t.Errorf("an arm64 host without the NEON kernels: %+v", host)
		}
	}
}

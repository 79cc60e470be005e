package cpu

import (
	"strings"
	"testing"
)

// TestLimit: each kernel set keeps what a machine of its class runs and
// nothing more, and refuses a CPU without it.
func TestLimit(t *testing.T) {
	all := Kernels{AVX2: true, AVX512: true, F16C: true, VNNI: true, QAVX2: true, F16Dot: true, F32Dot8: true,
		FAF16C: true, FAZ: true, SgemmR: 4, SgemmC: 4, Vec: true, Vec512: true, Tile4: true, Row: true, Exp4: true, FA: true}
	if got, err := all.Limit("native"); err != nil || got != all {
		t.Errorf("native: %+v, %v", got, err)
	}
	if got, err := all.Limit(""); err != nil || got != all {
		t.Errorf(`"": %+v, %v`, got, err)
	}
	if got, err := all.Limit("avx512"); err != nil || got != all {
		t.Errorf("avx512: %+v, %v", got, err)
	}
	want := Kernels{AVX2: true, F16C: true, QAVX2: true, F16Dot: true, F32Dot8: true,
		FAF16C: true, SgemmR: 4, SgemmC: 3, Vec: true, Row: true, Exp4: true, FA: true}
	avx2, err := all.Limit("avx2")
	if err != nil || avx2 != want {
		t.Errorf("avx2: %+v, %v; want %+v", avx2, err, want)
	}
	// What an AVX2-only CPU detects is what avx2 leaves.
	if again, err := avx2.Limit("avx2"); err != nil || again != avx2 {
		t.Errorf("avx2 of avx2: %+v, %v", again, err)
	}
	if _, err := avx2.Limit("avx512"); err == nil || !strings.Contains(err.Error(), "no AVX-512") {
		t.Errorf("avx512 on an AVX2 set: %v", err)
	}
	if _, err := (Kernels{}).Limit("avx2"); err == nil || !strings.Contains(err.Error(), "no AVX2") {
		t.Errorf("avx2 on the portable set: %v", err)
	}
	if got, err := all.Limit("portable"); err != nil || got != (Kernels{}) {
		t.Errorf("portable: %+v, %v", got, err)
	}
	if _, err := all.Limit("sse2"); err == nil || !strings.Contains(err.Error(), `unknown kernel set "sse2"`) {
		t.Errorf("sse2: %v", err)
	}
	// The host's own sets.
	for _, name := range KernelSets {
		got, err := host.Limit(name)
		if err != nil {
			continue // the CPU has no such set
		}
		if name == "avx2" && (got.AVX512 || got.VNNI || got.Vec512 || got.Tile4 || got.FAZ || got.SgemmC > 3) {
			t.Errorf("host avx2 set %+v has AVX-512 kernels", got)
		}
	}
}

package cpu

import (
	"testing"

	xcpu "golang.org/x/sys/cpu"
)

// TestSgemmTilesInEveryBuild guards the plain build (no GOEXPERIMENT=simd):
// the tinyBLAS-order tiles and the F16C conversions are assembly with
// their own CPU checks, so they run wherever the CPU has them, not only
// in the simd build (without them the plain build took seconds per f32 or
// f16 MUL_MAT at llama shapes).
func TestSgemmTilesInEveryBuild(t *testing.T) {
	for _, c := range []struct {
		avx512, fma bool
		r, c        int
	}{{true, true, 4, 4}, {false, true, 4, 3}, {false, false, 0, 0}} {
		if r, cc := sgemmTileShape(c.avx512, c.fma); r != c.r || cc != c.c {
			t.Errorf("sgemmTileShape(avx512 %v, fma %v) = %dx%d, want %dx%d", c.avx512, c.fma, r, cc, c.r, c.c)
		}
	}
	if r, c := sgemmTileShape(host.AVX512, host.AVX2); host.SgemmR != r || host.SgemmC != c {
		t.Errorf("tiles %dx%d on a CPU for %dx%d", host.SgemmR, host.SgemmC, r, c)
	}
	if host.AVX2 && host.SgemmR == 0 {
		t.Error("no tinyBLAS-order tiles on a CPU with AVX2 and FMA")
	}
	if host.AVX2 && xcpu.X86.HasF16C && !host.F16C {
		t.Error("F16C conversions off on a CPU with F16C")
	}
}

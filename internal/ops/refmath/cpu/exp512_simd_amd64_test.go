//go:build goexperiment.simd && amd64

package cpu

import (
	"math"
	"simd/archsimd"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkExpKernels times the exp-bound kernels of this CPU's paths side
// by side on one llama-3-8B row (14336 values): silu by the AVX2 kernel
// (siluAVX2) and the AVX-512 one (siluAVX512), and soft_max's exp by
// expShiftVec and expShiftVec2; cpu-ms/op is the process's CPU time.
func BenchmarkExpKernels(b *testing.B) {
	const n = 14336
	x := opstest.RandVals(31, n, -8, 8)
	dst := make([]float32, n)
	run := func(name string, ok bool, fn func()) {
		b.Run(name, func(b *testing.B) {
			if !ok {
				b.Skip("not on this CPU")
			}
			cpu0 := opstest.ProcessCPUNS()
			for b.Loop() {
				fn()
			}
			ops.ClearUpper()
			b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	run("silu-avx2", host.AVX2, func() { siluAVX2(ptr(dst), ptr(x), nil, n) })
	run("silu-avx512", host.AVX512, func() { siluAVX512(ptr(dst), ptr(x), nil, n) })
	w := opstest.RandVals(33, n, -20, 0)
	run("exp-1chain", host.Vec512, func() { copy(dst, w); expShiftVec(ptr(dst), n, 0.5) })
	run("exp-2chain", host.Vec512, func() { copy(dst, w); host.expShiftVec2(ptr(dst), n&^15, 0.5) })
}

// TestExpShift512 checks soft_max's and flash_attn_ext's AVX-512 exp with
// two chains (expShiftVec2) against the one-chain kernel (expShiftVec)
// bit for bit, for several shifts m, on float32 bit patterns at a stride
// (ET_EXP512_STRIDE; 1 is all 2^32) and on the special values at every
// length 0..96 that is a multiple of 8 and every position. It is skipped
// on CPUs without AVX-512. (TestExpShiftRowVec checks expShiftRow, which
// runs this kernel there, against expf32.)
func TestExpShift512(t *testing.T) {
	if !host.Vec512 {
		t.Skip("CPU without AVX-512")
	}
	const chunk = 1 << 16
	got, want := make([]float32, chunk), make([]float32, chunk)
	ms := []float32{0, 0.5, -3.25, 88.5, float32(math.Inf(1)), float32(math.Inf(-1))}
	check := func(x []float32) {
		n := len(x) &^ 7
		for _, m := range ms {
			copy(got, x[:n])
			copy(want, x[:n])
			if n > 0 {
				if n16 := n &^ 15; n16 > 0 {
					host.expShiftVec2(ptr(got), n16, m)
				}
				if n16 := n &^ 15; n16 < n {
					expShiftVec(ptr(got[n16:]), n-n16, m)
				}
				expShiftVec(ptr(want), n, m)
				ops.ClearUpper()
			}
			for i := range n {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("len %d: exp(%g [%#08x] - %g) = %#08x, one-chain kernel %#08x", n, x[i],
						math.Float32bits(x[i]), m, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
	stride := envStride("ET_EXP512_STRIDE", 251)
	n := bitPatterns(stride, chunk, check)
	sp := specialF32()
	for m := 0; m <= 96; m += 8 {
		for off := range sp {
			y := make([]float32, m)
			for i := range y {
				y[i] = sp[(i+off)%len(sp)]
			}
			check(y)
		}
	}
	t.Logf("%d bit patterns (stride %d), %d shifts and the special values: bit-identical", n, stride, len(ms))
}

// Detect's check of the assembly kernels' extensions agrees with archsimd's.
func TestSiluCPU(t *testing.T) {
	if want := archsimd.X86.AVX2() && archsimd.X86.FMA(); host.AVX2 != want {
		t.Errorf("Detect: AVX2+FMA %v, archsimd %v", host.AVX2, want)
	}
	if archsimd.X86.AVX512() && !host.AVX512 {
		t.Error("Detect: no AVX-512, archsimd has AVX-512")
	}
}

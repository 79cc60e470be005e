//go:build goexperiment.simd && amd64

package ops

import (
	"math"
	"os"
	"strconv"
	"testing"
)

// specialF32 are edge values of the exp kernels: zeros, infinities, NaNs
// (quiet, signalling, with payloads), the extremes, denormals, and the
// float32 exp's overflow and underflow thresholds (±88.7, ±103.97, ±104)
// and the clamps (±100, ±110).
func specialF32() []float32 {
	inf := float32(math.Inf(1))
	f := math.Float32frombits
	return []float32{0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), f(0xffc00001), f(0x7f800001),
		f(0xff800001), f(0x7fbfffff), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32, f(0x007fffff), f(0x807fffff), f(0x00400000), f(0x80000010), f(0x00800000),
		-104, 104, -103.97208, 103.97208, -103.972084, -103.27893, -88.72284, -88.72283, 88.72283, 88.72284,
		-87.33655, 87.33655, -88, 88, 89, -89, 95.5, -95.5, 100, -100, 110, -110, 120, -120, 1e30, -1e30,
		1e-30, -1e-30, 1e-40, -1e-40, 0.5, -0.5, 1, -1, 3.75, -3.75, 0.34657359, -0.34657359}
}

// bitPatterns calls fn on chunks of float32 bit patterns 0, stride,
// 2·stride, ... below 2^32 (every sign, NaNs and infinities included),
// each chunk a multiple of 8 long but the last, and returns how many.
func bitPatterns(stride uint64, chunk int, fn func(x []float32)) int {
	x := make([]float32, 0, chunk)
	n := 0
	for b := uint64(0); b < 1<<32; b += stride {
		x = append(x, math.Float32frombits(uint32(b)))
		if len(x) == chunk {
			fn(x)
			n += len(x)
			x = x[:0]
		}
	}
	fn(x)
	return n + len(x)
}

func envStride(name string, def uint64) uint64 {
	if s, err := strconv.Atoi(os.Getenv(name)); err == nil && s > 0 {
		return uint64(s)
	}
	if testing.Short() {
		return def * 16
	}
	return def
}

// BenchmarkExpKernels times the exp-bound kernels of this CPU's paths side
// by side on one llama-3-8B row (14336 values): silu by the AVX2 kernel
// (siluVec8x2) and the AVX-512 one (siluAVX512), and soft_max's exp by
// expShiftVec and expShiftVec2; cpu-ms/op is the process's CPU time.
func BenchmarkExpKernels(b *testing.B) {
	const n = 14336
	x := randVals(31, n, -8, 8)
	dst := make([]float32, n)
	run := func(name string, ok bool, fn func()) {
		b.Run(name, func(b *testing.B) {
			if !ok {
				b.Skip("not on this CPU")
			}
			cpu0 := processCPUNS()
			for b.Loop() {
				fn()
			}
			clearUpper()
			b.ReportMetric(float64(processCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	run("silu-avx2", vecExp, func() { siluVec8x2(ptr(dst), ptr(x), nil, n) })
	run("silu-avx512", vecExp512, func() { siluAVX512(ptr(dst), ptr(x), nil, n) })
	w := randVals(33, n, -20, 0)
	run("exp-1chain", vecQuant, func() { copy(dst, w); expShiftVec(ptr(dst), n, 0.5) })
	run("exp-2chain", vecQuant, func() { copy(dst, w); expShiftVec2(ptr(dst), n&^15, 0.5) })
}

// TestExpShift512 checks soft_max's and flash_attn_ext's AVX-512 exp with
// two chains (expShiftVec2) against the one-chain kernel (expShiftVec)
// bit for bit, for several shifts m, on float32 bit patterns at a stride
// (ET_EXP512_STRIDE; 1 is all 2^32) and on the special values at every
// length 0..96 that is a multiple of 8 and every position. It is skipped
// on CPUs without AVX-512. (TestExpShiftRowVec checks expShiftRow, which
// runs this kernel there, against expf32.)
func TestExpShift512(t *testing.T) {
	if !vecQuant {
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
					expShiftVec2(ptr(got), n16, m)
				}
				if n16 := n &^ 15; n16 < n {
					expShiftVec(ptr(got[n16:]), n-n16, m)
				}
				expShiftVec(ptr(want), n, m)
				clearUpper()
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

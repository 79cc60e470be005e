package cpu

import (
	"math"
	"os"
	"strconv"
	"testing"
	"unsafe"

	"github.com/ainekko/et/internal/ops/opstest"
)

// TestSiluVecMatchesScalar checks both vector silu kernels, siluAVX512
// (AVX-512) and siluAVX2 (AVX2 and FMA), with and without a gate,
// against siluGGML lane by lane, bit for bit (any NaN where it gives a
// NaN): on float32 bit patterns at a stride (ET_SILU_VEC_STRIDE; 1 is all
// 2^32), on every float32 of ±[80, 96] (siluAVX2's fast steps end at
// |x| = 86, 2^n stops being normal near 87.3, exp(x) overflows near 88.7),
// then on the special values at every position of a 16-value step (steps
// that mix fast and full lanes). SiluRow and SwigluRow, with this CPU's
// set and with the AVX2 set, must also split each row as ggml does, the
// vector method on the first len&^15 values and the C library's expf
// after.
func TestSiluVecMatchesScalar(t *testing.T) {
	if !host.AVX2 {
		t.Skip("CPU without AVX2 and FMA")
	}
	kernels := []struct {
		name string
		ok   bool
		run  func(pd, px, pg unsafe.Pointer, n int)
	}{{"avx512", host.AVX512, siluAVX512}, {"avx2", true, siluAVX2}}
	const chunk = 1 << 16
	g := make([]float32, chunk)
	for i := range g {
		g[i] = float32(i%29-14) * 0.37
	}
	g[5], g[6], g[7], g[40] = float32(math.Inf(1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1))
	got := make([]float32, chunk)
	check := func(x []float32) {
		m := len(x) &^ 15
		for _, k := range kernels {
			if !k.ok || m == 0 {
				continue
			}
			for _, gate := range [][]float32{nil, g} {
				var pg unsafe.Pointer
				if gate != nil {
					pg = unsafe.Pointer(&gate[0])
				}
				k.run(unsafe.Pointer(&got[0]), unsafe.Pointer(&x[0]), pg, m)
				for i := range m {
					want := SiluGGML(x[i])
					if gate != nil {
						want *= gate[i]
					}
					if !opstest.SameBits(got[i], want) {
						t.Fatalf("%s, gate %v: silu(%g [%#08x]) = %#08x, scalar %#08x", k.name, gate != nil, x[i],
							math.Float32bits(x[i]), math.Float32bits(got[i]), math.Float32bits(want))
					}
				}
			}
		}
	}
	stride := envStride("ET_SILU_VEC_STRIDE", 251)
	n := bitPatterns(stride, chunk, check)
	for _, sign := range []uint32{0, 1 << 31} {
		x := make([]float32, 0, chunk)
		for b := math.Float32bits(80); b <= math.Float32bits(96); b++ {
			if x = append(x, math.Float32frombits(b|sign)); len(x) == chunk {
				check(x)
				x = x[:0]
			}
		}
		check(x)
	}
	sp := specialF32()
	for off := range 16 {
		y := make([]float32, 16*((len(sp)+31)/16))
		for i := range y {
			y[i] = sp[(i+off)%len(sp)]
		}
		check(y)
	}
	// The row split: vector blocks, then the scalar tail, by this CPU's
	// set and by the AVX2 one (which may be the same).
	x := opstest.RandVals(41, 100, -20, 20)
	copy(x[40:], sp[:20]) // infinities, NaNs, denormals in the second and third steps
	avx2, err := host.Limit("avx2")
	if err != nil {
		t.Fatal(err)
	}
	for _, ks := range []*Kernels{host, &avx2} {
		checkSiluRows(t, ks, x, g)
	}
	t.Logf("%d bit patterns (stride %d) and the special values: bit-identical", n, stride)
}

// checkSiluRows checks ks.SiluRow and ks.SwigluRow on every prefix of x
// (gate g) against siluGGML on the first len&^15 values and SiluF32 after.
func checkSiluRows(t *testing.T, ks *Kernels, x, g []float32) {
	t.Helper()
	got := make([]float32, len(x))
	for m := 0; m <= len(x); m++ {
		ks.SiluRow(got[:m], x[:m])
		for i := range m {
			want := SiluGGML(x[i])
			if i >= m&^15 {
				want = SiluF32(x[i])
			}
			if !opstest.SameBits(got[i], want) {
				t.Fatalf("len %d: siluRow[%d] = %#08x, want %#08x", m, i, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		ks.SwigluRow(got[:m], x[:m], g[:m])
		for i := range m {
			want := SiluGGML(x[i]) * g[i]
			if i >= m&^15 {
				want = SiluF32(x[i]) * g[i]
			}
			if !opstest.SameBits(got[i], want) {
				t.Fatalf("len %d: swigluRow[%d] = %#08x, want %#08x", m, i, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
}

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

// TestSoftMaxExpVec checks softMaxExpAVX512 and softMaxExpAVX2 against
// softMaxExpScalar bit for bit, the exps and the float64 sum: float32 bit
// patterns at a stride shifted by maxima around 0, 1 and the overflow and
// underflow thresholds, and the special values (±Inf, NaN, ±0) at every
// lane of a 16-value block.
func TestSoftMaxExpVec(t *testing.T) {
	if !host.AVX2 {
		t.Skip("CPU without AVX2 and FMA")
	}
	kernels := []struct {
		name string
		ok   bool
		run  func(p unsafe.Pointer, n int, m float32) float64
	}{{"avx512", host.AVX512, softMaxExpAVX512}, {"avx2", true, softMaxExpAVX2}}
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
	}
	check := func(x []float32, m float32) {
		t.Helper()
		want := append([]float32(nil), x...)
		wsum := softMaxExpScalar(want, m)
		for _, k := range kernels {
			if !k.ok {
				continue
			}
			got := append([]float32(nil), x...)
			gsum := k.run(unsafe.Pointer(&got[0]), len(got), m)
			for i := range got {
				if !same(got[i], want[i]) {
					t.Fatalf("%s: exp(%g - %g) = %g (%#08x), scalar %g (%#08x)", k.name, x[i], m, got[i],
						math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
			if math.Float64bits(gsum) != math.Float64bits(wsum) && !(gsum != gsum && wsum != wsum) {
				t.Fatalf("%s: sum %v, scalar %v (m = %g)", k.name, gsum, wsum, m)
			}
		}
	}
	x := make([]float32, 1<<14)
	for _, m := range []float32{0, 1, -1, 88.7, -87.3, 103.9, 1e-30, 1e30} {
		for base := uint32(0); base < 1<<16; base += 1 << 14 {
			for i := range x {
				x[i] = math.Float32frombits(uint32(i+int(base))*262139 + 17)
			}
			check(x, m)
		}
		for i := range x {
			x[i] = m + float32(i%4096-2048)/32 // dense around the maximum
		}
		check(x, m)
	}
	specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1))}
	for _, v := range specials {
		for lane := range 16 {
			y := make([]float32, 32)
			for i := range y {
				y[i] = float32(i%7) * 0.5
			}
			y[lane], y[16+(lane*5)%16] = v, v
			check(y, 2)
		}
	}
}

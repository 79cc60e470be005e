//go:build goexperiment.simd && amd64

package ops

import (
	"math"
	"os"
	"simd/archsimd"
	"strconv"
	"testing"
)

// TestSiluVecWide checks siluRow and swigluRow, whose loop runs sixteen
// values a step in interleaved chains, against
// siluVec8 applied to each eight values (and the scalar code on the tail),
// bit for bit, NaN payloads included: on the float32 bit patterns at a
// stride (ET_SILU_WIDE_STRIDE overrides it; 1 is every pattern, NaNs and
// infinities included), then on special values, at every length 0..80 so
// that each block size and the tail meet every position. (swiglu with a
// NaN gate may keep either NaN.)
func TestSiluVecWide(t *testing.T) {
	if !vecExp {
		t.Skip("CPU without AVX2 and FMA")
	}
	stride := uint64(257)
	if s, err := strconv.Atoi(os.Getenv("ET_SILU_WIDE_STRIDE")); err == nil && s > 0 {
		stride = uint64(s)
	}
	if testing.Short() {
		stride *= 16
	}
	const chunk = 1 << 16
	x := make([]float32, 0, chunk)
	g := make([]float32, chunk)
	for i := range g {
		g[i] = float32(i%29-14) * 0.37
	}
	g[5], g[6], g[7] = float32(math.Inf(1)), float32(math.NaN()), 0
	silu, swi := make([]float32, chunk), make([]float32, chunk)
	want, wantSwi := make([]float32, chunk), make([]float32, chunk)
	ref := func(m int) {
		n := m &^ 7
		for i := 0; i < n; i += 8 {
			y := siluVec8(archsimd.LoadFloat32x8((*[8]float32)(x[i:])), expK)
			y.Store((*[8]float32)(want[i:]))
			y.Mul(archsimd.LoadFloat32x8((*[8]float32)(g[i:]))).Store((*[8]float32)(wantSwi[i:]))
		}
		archsimd.ClearAVXUpperBits()
		if n < 8 {
			n = 0 // siluRow takes rows shorter than 8 scalar
		}
		siluRowScalar(want[n:m], x[n:m])
		swigluRowScalar(wantSwi[n:m], x[n:m], g[n:m])
	}
	check := func(m int) {
		siluRow(silu[:m], x[:m])
		swigluRow(swi[:m], x[:m], g[:m])
		ref(m)
		for i := range m {
			if math.Float32bits(silu[i]) != math.Float32bits(want[i]) {
				t.Fatalf("len %d: silu(%g [%#08x]) = %#08x, want %#08x", m, x[i], math.Float32bits(x[i]),
					math.Float32bits(silu[i]), math.Float32bits(want[i]))
			}
			// With a NaN gate, which NaN operand the product keeps is the
			// compiler's choice of operand order: any NaN.
			if math.Float32bits(swi[i]) != math.Float32bits(wantSwi[i]) && !(g[i] != g[i] && sameBits(swi[i], wantSwi[i])) {
				t.Fatalf("len %d: swiglu(%g [%#08x], %g) = %#08x, want %#08x", m, x[i], math.Float32bits(x[i]), g[i],
					math.Float32bits(swi[i]), math.Float32bits(wantSwi[i]))
			}
		}
	}
	n := 0
	for b := uint64(0); b < 1<<32; b += stride {
		x = append(x, math.Float32frombits(uint32(b)))
		if len(x) == chunk {
			check(chunk)
			n += chunk
			x = x[:0]
		}
	}
	check(len(x))
	n += len(x)
	inf := float32(math.Inf(1))
	x = append(x[:0], 0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), math.Float32frombits(0xffc00001),
		math.Float32frombits(0x7f800001), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32, -104, -103.97208, -88.72284, -88.72283, 88.72283, 88.72284, 100, 110, -110,
		120, -120, 1e30, -1e30, 1e-30, -1e-30, 0.5, -0.5, 1, -1, 3.75, -3.75)
	for len(x) < 80 {
		x = append(x, float32(len(x))*-0.61)
	}
	for m := 0; m <= 80; m++ {
		check(m)
	}
	t.Logf("%d bit patterns (stride %d) and 81 lengths of special values: bit-identical", n, stride)
}

// TestF32ToF16RowImpls checks both vector conversions, the integer one
// (CPUs without F16C) and VCVTPS2PH's, against F32ToF16; a NaN in any
// position of a group of eight, and groups of eight without one around
// it, make the F16C path hand that group to the scalar code and go on.
func TestF32ToF16RowImpls(t *testing.T) {
	if !vecRow {
		t.Skip("no AVX2")
	}
	checkF32ToF16Row(t, "f32ToF16RowInt", f32ToF16RowInt)
	if !hasF16C {
		t.Skip("no F16C")
	}
	checkF32ToF16Row(t, "f32ToF16RowF16C", f32ToF16RowF16C)
	nan := math.Float32frombits(0x7fc01234) // a payload F16C would keep
	for n := 8; n <= 40; n++ {
		for pos := 0; pos < n; pos++ {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i) + 0.3
			}
			src[pos] = nan
			if pos%2 == 1 {
				src[pos] = -nan
			}
			got := make([]uint16, n)
			f32ToF16RowF16C(got, src)
			for i, v := range src {
				if w := F32ToF16(v); got[i] != w {
					t.Fatalf("n %d, NaN at %d: element %d (%g) = %#04x, want %#04x", n, pos, i, v, got[i], w)
				}
			}
		}
	}
}

package ops

import (
	"math"
	"os"
	"strconv"
	"testing"
)

// TestSiluVecUlp checks the silu and swiglu row kernels (the vector code in
// simd builds) against the scalar definitions, whose exp is float64
// math.Exp rounded to float32, on every float32 in [-120, 120] at a dense
// stride (ET_SILU_ULP_STRIDE overrides it; 1 is every value) and on the
// special values: at most one ulp apart, NaN where the scalar code gives
// NaN, and it logs how many values differ.
func TestSiluVecUlp(t *testing.T) {
	stride := uint32(97)
	if s, err := strconv.Atoi(os.Getenv("ET_SILU_ULP_STRIDE")); err == nil && s > 0 {
		stride = uint32(s)
	}
	if testing.Short() {
		stride *= 16
	}
	const chunk = 1 << 16
	x := make([]float32, 0, chunk+32)
	g := make([]float32, chunk+32)
	for i := range g {
		g[i] = float32(i%29-14) * 0.37 // gates of either sign and many mantissas
	}
	silu, swi := make([]float32, len(g)), make([]float32, len(g))
	var n, diffSilu, diffSwi int
	check := func() {
		m := len(x)
		siluRow(silu[:m], x)
		swigluRow(swi[:m], x, g[:m])
		for i, v := range x {
			for _, c := range []struct {
				name      string
				got, want float32
				diffs     *int
			}{{"silu", silu[i], siluF32(v), &diffSilu}, {"swiglu", swi[i], siluF32(v) * g[i], &diffSwi}} {
				if sameBits(c.got, c.want) {
					continue
				}
				d := int64(math.Float32bits(c.got)) - int64(math.Float32bits(c.want))
				if c.got != c.got || c.want != c.want || d < -1 || d > 1 {
					t.Fatalf("%s(%g [%#08x], gate %g) = %g [%#08x], want %g [%#08x]", c.name, v, math.Float32bits(v),
						g[i], c.got, math.Float32bits(c.got), c.want, math.Float32bits(c.want))
				}
				*c.diffs++
			}
		}
		n += m
		x = x[:0]
	}
	for _, sign := range []uint32{0, 0x80000000} {
		for b := uint32(0); b <= math.Float32bits(120); b += stride {
			x = append(x, math.Float32frombits(b|sign))
			if len(x) == chunk {
				check()
			}
		}
	}
	check()
	inf := float32(math.Inf(1))
	x = append(x, 0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), math.Float32frombits(0xffc00001),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		-104, -103.97208, -88.72284, -88.72283, -88.7, 88.72283, 88.72284, 87.33655, -87.33655, 100, 110, -110, 1e30, -1e30)
	for len(x)%8 != 3 {
		x = append(x, -1.5)
	}
	check()
	t.Logf("%d values (stride %d): silu %d and swiglu %d one ulp off", n, stride, diffSilu, diffSwi)
}

package refmath

import (
	"math"
	"math/big"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// siluGoldenRow is the row length of testdata/silu: six vector blocks of
// 16 and a scalar tail of 4.
const siluGoldenRow = 100

// siluGoldenInputs are testdata/silugen/gen.c's inputs: float32 bit
// patterns i·524287 for i < 8192, [-24, 24) in steps of 1/128, 16 floats
// around each of ±88.72283, ±103.97208, ±87.33655, ±133.08, ±ln2/2, ±1,
// then zeros to a whole row.
func siluGoldenInputs() []float32 {
	var x []float32
	for i := uint32(0); i < 8192; i++ {
		x = append(x, math.Float32frombits(i*524287))
	}
	for i := range 4096 {
		x = append(x, float32(-24.0+48.0*float64(i)/4096))
	}
	for _, th := range []float32{88.72283, 103.97208, 87.33655, 133.08, 0.34657359, 1} {
		for _, s := range []float32{-1, 1} {
			for k := int64(-8); k < 8; k++ {
				x = append(x, math.Float32frombits(uint32(int64(math.Float32bits(s*th))+k)))
			}
		}
	}
	for len(x)%siluGoldenRow != 0 {
		x = append(x, 0)
	}
	return x
}

// TestSiluMatchesGGML runs UNARY silu and GLU swiglu (split form) through
// the catalog on the inputs of testdata/silugen and compares them bit for
// bit (any NaN for a NaN) with what ggml's CPU backend computed for them
// (testdata/silu, from the prebuilt ../shared/ggml: the AVX-512 build).
func TestSiluMatchesGGML(t *testing.T) {
	x := siluGoldenInputs()
	g := make([]float32, len(x))
	for i := range g {
		g[i] = float32(i%29-14) * 0.37
	}
	shape := []int64{siluGoldenRow, int64(len(x) / siluGoldenRow)}
	a, gt := ops.FromF32(ops.F32, shape, x), ops.FromF32(ops.F32, shape, g)
	for _, c := range []struct {
		file string
		y    *ops.Tensor
	}{
		{"silu.f32", mustOp(t, ops.OpUnary, []*ops.Tensor{a}, map[string]any{"op": "silu"})},
		{"swiglu.f32", mustOp(t, ops.OpGLU, []*ops.Tensor{a, gt}, map[string]any{"op": "swiglu"})},
	} {
		want := opstest.ReadF32File(t, filepath.Join("testdata", "silu", c.file))
		got := c.y.ToF32()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, golden %d", c.file, len(got), len(want))
		}
		bad := 0
		for i := range got {
			if opstest.SameBits(got[i], want[i]) {
				continue
			}
			if bad++; bad <= 5 {
				t.Errorf("%s[%d]: x %g [%#08x]: et %#08x, ggml %#08x", c.file, i, x[i], math.Float32bits(x[i]),
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
		if bad > 0 {
			t.Fatalf("%s: %d of %d values differ from ggml's", c.file, bad, len(got))
		}
	}
}

// TestFMA32 checks fma32 against a·b + c computed exactly (math/big) and
// rounded once to float32, on random operands of every magnitude, on
// products and sums near float32 ties, and on cancellations.
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
		p := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)), big.NewFloat(float64(b)))
		x.SetPrec(200).Add(p, big.NewFloat(float64(c)))
		f, _ := x.Float32()
		return f
	}
	r := rand.New(rand.NewSource(7))
	rf := func() float32 {
		// Random bits with exponents kept near 1 so that sums and
		// products overlap, now and then anywhere.
		b := r.Uint32()
		if r.Intn(4) != 0 {
			b = b&0x807fffff | uint32(100+r.Intn(56))<<23
		}
		f := math.Float32frombits(b)
		if f != f || math.IsInf(float64(f), 0) {
			return 1
		}
		return f
	}
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := range n {
		a, b, c := rf(), rf(), rf()
		switch i % 4 {
		case 1: // c cancels most of the product
			c = -float32(float64(a) * float64(b))
		case 2: // a tie: (1 + k·2^-12)², k odd, is halfway between two
			// float32s; a tiny c (or none) decides
			a = 1 + float32(2*r.Intn(500)+1)/4096
			b = a
			c = float32(math.Ldexp(float64(rf()), -70)) * float32(r.Intn(2))
		case 3: // the constants of the exp
			a, b = rf(), cpu.ExpgLog2e
			c = cpu.ExpgShift
		}
		got, want := cpu.Fma32(a, b, c), exact(a, b, c)
		if !opstest.SameBits(got, want) && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%g, %g, %g) = %g [%#08x], exact %g [%#08x]", a, b, c, got, math.Float32bits(got),
				want, math.Float32bits(want))
		}
	}
}

// TestSiluGGMLUlp checks the scalar silu (ggml's method, siluGGML) against
// silu in float64 on every float32 in [-88, 88] at a stride: within 4 ulp
// (ggml documents its exp at under 2 ulp; 1 + e and the division round
// again), and it logs the largest error seen.
func TestSiluGGMLUlp(t *testing.T) {
	stride := uint32(61)
	if testing.Short() {
		stride = 977
	}
	maxUlp := 0.0
	for _, sign := range []uint32{0, 0x80000000} {
		for b := uint32(0); b <= math.Float32bits(88); b += stride {
			x := math.Float32frombits(b | sign)
			got := cpu.SiluGGML(x)
			w := float64(x) / (1 + math.Exp(-float64(x)))
			if w == 0 {
				if got != 0 {
					t.Fatalf("silu(%g) = %g, want 0", x, got)
				}
				continue
			}
			ulp := math.Abs(float64(got)-w) / ulp32(w)
			maxUlp = max(maxUlp, ulp)
			if ulp > 4 {
				t.Fatalf("silu(%g [%#08x]) = %g, float64 %g: %.2f ulp", x, math.Float32bits(x), got, w, ulp)
			}
		}
	}
	t.Logf("largest error %.3f ulp", maxUlp)
}

// ulp32 is the spacing of float32s at |w|.
func ulp32(w float64) float64 {
	f := float32(math.Abs(w))
	return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
}

package mulmat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestMulMat8RowsNEON runs the arm64 eight-row q8_0 and q4_0 kernels
// (mulmat_qneon_arm64.s) by widening multiplies and, where the CPU has the
// dot product, by SDOT, against the scalar kernels, bit for bit, on
// testMulMat8Rows' weights: several groups of eight rows and a remainder,
// one and two columns a call, the largest products (quants −128, nibbles 0
// and 15 against ±127) and subnormal, infinite and NaN scales. Under qemu
// the SDOT kernels run where the emulated CPU has them (QEMU_CPU=max).
func TestMulMat8RowsNEON(t *testing.T) {
	if !host.NEON {
		t.Skip("no NEON kernels in this kernel set")
	}
	shapes := []struct{ k, m, n int64 }{{32, 8, 1}, {64, 24, 3}, {2144, 19, 2}, {256, 40, 37}, {96, 33, 17}}
	r := rand.New(rand.NewPCG(81, 82))
	for _, dot := range []bool{false, true} {
		if dot && !host.DotProd {
			t.Log("no dot product (ASIMDDP) on this CPU: the SDOT kernels are not tested here")
			continue
		}
		ks := Host()
		ks.DotProd = dot
		testMulMat8Rows(t, &ks, r, shapes, false, fmt.Sprintf("neon,dotprod=%v", dot))
	}
}

// TestMulMatFloatNEON runs f32 and f16 MulMat with the arm64 kernels (the
// eight-row dots against one column, dot8_arm64.s; the 2x2 tinyBLAS-order
// tiles for two columns or more, mulmat_sgemm_arm64.s) against the portable
// code alone, bit for bit, on shapes with tails (k not a multiple of 8,
// rows not of 8, an odd column) and weights and activations with
// infinities, NaNs, subnormals and magnitudes whose products round.
func TestMulMatFloatNEON(t *testing.T) {
	if !host.NEON {
		t.Skip("no NEON kernels in this kernel set")
	}
	r := rand.New(rand.NewPCG(83, 84))
	for _, typ := range []ops.Type{ops.F32, ops.F16} {
		for _, s := range []struct{ k, m, n int64 }{{8, 8, 1}, {100, 19, 1}, {4096 + 3, 16, 1}, {16, 4, 2}, {2*fTileK + 48, 12, 5}, {160, 20, 7}, {64, 8, 3}} {
			w := opstest.RandF32(r, int(s.k*s.m))
			x := opstest.RandF32(r, int(s.k*s.n))
			for i := range w {
				w[i] *= float32(math.Exp2(float64(r.IntN(20) - 10)))
			}
			w[3], w[len(w)-1], x[5] = float32(math.Inf(1)), float32(math.NaN()), 1e-40
			a := ops.FromF32(typ, []int64{s.k, s.m}, w)
			b := ops.FromF32(ops.F32, []int64{s.k, s.n}, x)
			got, want := ops.New(ops.F32, s.m, s.n), ops.New(ops.F32, s.m, s.n)
			host.mulMat(got, a, b, false)
			(&Kernels{}).mulMat(want, a, b, false)
			g, wv := got.ToF32(), want.ToF32()
			for i := range g {
				if !opstest.SameBits(g[i], wv[i]) {
					t.Fatalf("%s k=%d m=%d n=%d: dst[%d] = %g (%#08x), portable %g (%#08x)", typ, s.k, s.m, s.n, i, g[i], math.Float32bits(g[i]), wv[i], math.Float32bits(wv[i]))
				}
			}
		}
	}
}

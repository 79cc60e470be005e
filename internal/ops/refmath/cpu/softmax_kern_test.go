package cpu

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops/opstest"
)

// TestSoftMaxPrepVec checks soft_max's vector steps against the scalar
// loops of refSoftMax bit for bit: softMaxPrepVec (scale, mask times
// slope, maximum; reading x in place of w or from a separate row) and
// ScaleRowVec, at every length 0..100 and about 4096, with and without a
// mask, with ±0, ±inf, denormals and (in some rows) a NaN. The maximum
// must equal the scalar one (a NaN if any w is NaN; a zero of either sign).
func TestSoftMaxPrepVec(t *testing.T) {
	if _, ok := host.SoftMaxPrepVec(make([]float32, 8), make([]float32, 8), 1, nil, 0); !ok {
		t.Skip("no vector soft_max steps in this build or on this CPU")
	}
	src := opstest.RandVals(91, 4200, -30, 30)
	msk := opstest.RandVals(92, 4200, -2, 0)
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)), 1e-40, -1e-40,
		math.MaxFloat32, -math.MaxFloat32}
	for i, v := range sp {
		src[11*i+3] = v
		msk[17*i+6] = v
	}
	var lens []int
	for n := 0; n <= 100; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 4080, 4095, 4096, 4097, 4103, 4111)
	for _, n := range lens {
		for _, c := range []struct {
			mask, inPlace bool
			nanAt         int
		}{{false, true, -1}, {true, true, -1}, {false, false, -1}, {true, false, -1}, {true, false, n - 1}, {false, true, n / 2}, {true, false, 3}} {
			if c.nanAt >= n {
				continue
			}
			x := append([]float32(nil), src[:n]...)
			if c.nanAt >= 0 {
				x[c.nanAt] = float32(math.NaN())
			}
			var mrow []float32
			if c.mask {
				mrow = msk[:n]
			}
			const scale, slope = 0.088388, 0.75
			want := append([]float32(nil), x...)
			for i := range want {
				want[i] *= scale
				if mrow != nil {
					want[i] += slope * mrow[i]
				}
			}
			wm := float32(math.Inf(-1))
			for _, v := range want {
				wm = max(wm, v)
			}
			got := make([]float32, n)
			xr := x
			if c.inPlace {
				copy(got, x)
				xr = got
			}
			m, ok := host.SoftMaxPrepVec(got, xr, scale, mrow, slope)
			if !ok {
				if n >= 8 {
					t.Fatalf("len %d: softMaxPrepVec did nothing", n)
				}
				continue
			}
			if !opstest.SameBits(m, wm) && !(m == 0 && wm == 0) {
				t.Fatalf("len %d %+v: max %g, want %g", n, c, m, wm)
			}
			for i := range got {
				if !opstest.SameBits(got[i], want[i]) {
					t.Fatalf("len %d %+v: w[%d] = %g, want %g", n, c, i, got[i], want[i])
				}
			}
			inv := float32(1 / 3.7)
			for i := range want {
				want[i] *= inv
			}
			if !host.ScaleRowVec(got, inv) {
				t.Fatalf("len %d: scaleRowVec did nothing", n)
			}
			for i := range got {
				if !opstest.SameBits(got[i], want[i]) {
					t.Fatalf("len %d %+v: w[%d]·inv = %g, want %g", n, c, i, got[i], want[i])
				}
			}
		}
	}
}

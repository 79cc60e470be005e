package refmath

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// TestSoftMaxLongRows: soft_max over 4096-wide rows (the vector lanes'
// order of the sum, where the build and CPU have them, and a tail that
// is not a multiple of 8) with a scale, an f32 mask holding -inf and a
// per-head ALiBi slope, against softmax64 computed in float64 from the
// same float32 inputs.
func TestSoftMaxLongRows(t *testing.T) {
	for _, n0 := range []int{4096, 4099} {
		const n1, n2 = 3, 4
		xv := randVals(81, n0*n1*n2, -20, 20)
		mv := randVals(82, n0*n1, -2, 0)
		for i := range mv {
			if i%13 == 5 {
				mv[i] = float32(math.Inf(-1))
			}
		}
		x := ops.FromF32(ops.F32, []int64{int64(n0), n1, n2}, xv)
		mask := ops.FromF32(ops.F32, []int64{int64(n0), n1}, mv)
		const scale, maxBias = 0.25, 8
		got := mustOp(t, ops.OpSoftMax, []*ops.Tensor{x, mask}, map[string]any{"scale": scale, "max_bias": maxBias}).ToF32()
		slope := alibiSlopes(maxBias, n2)
		for h := 0; h < n2; h++ {
			for i := 0; i < n1; i++ {
				w := make([]float64, n0)
				for j := range w {
					w[j] = float64(xv[(h*n1+i)*n0+j])*scale + float64(slope(int64(h)))*float64(mv[i*n0+j])
				}
				want := softmax64(w, nil)
				row := got[(h*n1+i)*n0 : (h*n1+i+1)*n0]
				for j := range want {
					if d := math.Abs(float64(row[j]) - float64(want[j])); d > 2e-6*math.Max(float64(want[j]), 1e-30) && d > 1e-12 {
						t.Fatalf("n0 %d head %d row %d [%d]: got %g, want %g", n0, h, i, j, row[j], want[j])
					}
				}
			}
		}
	}
}

// TestSoftMaxPrepVec checks soft_max's vector steps against the scalar
// loops of refSoftMax bit for bit: softMaxPrepVec (scale, mask times
// slope, maximum; reading x in place of w or from a separate row) and
// scaleRowVec, at every length 0..100 and about 4096, with and without a
// mask, with ±0, ±inf, denormals and (in some rows) a NaN. The maximum
// must equal the scalar one (a NaN if any w is NaN; a zero of either sign).
func TestSoftMaxPrepVec(t *testing.T) {
	if _, ok := host.softMaxPrepVec(make([]float32, 8), make([]float32, 8), 1, nil, 0); !ok {
		t.Skip("no vector soft_max steps in this build or on this CPU")
	}
	src := randVals(91, 4200, -30, 30)
	msk := randVals(92, 4200, -2, 0)
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
			m, ok := host.softMaxPrepVec(got, xr, scale, mrow, slope)
			if !ok {
				if n >= 8 {
					t.Fatalf("len %d: softMaxPrepVec did nothing", n)
				}
				continue
			}
			if !sameBits(m, wm) && !(m == 0 && wm == 0) {
				t.Fatalf("len %d %+v: max %g, want %g", n, c, m, wm)
			}
			for i := range got {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("len %d %+v: w[%d] = %g, want %g", n, c, i, got[i], want[i])
				}
			}
			inv := float32(1 / 3.7)
			for i := range want {
				want[i] *= inv
			}
			if !host.scaleRowVec(got, inv) {
				t.Fatalf("len %d: scaleRowVec did nothing", n)
			}
			for i := range got {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("len %d %+v: w[%d]·inv = %g, want %g", n, c, i, got[i], want[i])
				}
			}
		}
	}
}

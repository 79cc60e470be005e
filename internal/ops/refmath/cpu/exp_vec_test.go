package cpu

import (
	"math"
	"testing"
)

// TestExpShiftRowVec: the vector exp of soft_max (where the build and CPU
// have it) gives float32(math.Exp(float64(w-m))) for every float32 w-m in
// a stride through [-120, 110] (every 61st float there gave no mismatch
// in 72M) and the special values, except for rare
// values one float32 ulp away (double rounding near a tie).
func TestExpShiftRowVec(t *testing.T) {
	var w []float32
	for _, lim := range []float32{-120, 110} {
		top := math.Float32bits(lim)
		for b := uint32(0); b < top; b += 1021 {
			w = append(w, math.Float32frombits(b|math.Float32bits(lim)&0x80000000))
		}
	}
	w = append(w, 0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()),
		-104, -103.97208, -103.972084, -103.27893, -87.33655, 88.72283, 88.72284, 100, 1e30, -1e30)
	for len(w)%8 != 3 { // and a scalar tail
		w = append(w, -1)
	}
	const m = 0.5
	got := append([]float32(nil), w...)
	if !host.ExpShiftRow(got, m) {
		t.Skip("no vector exp in this build or on this CPU")
	}
	diffs := 0
	for i, v := range w {
		want := Expf32(v - m)
		g := got[i]
		if math.Float32bits(g) == math.Float32bits(want) || (g != g && want != want) {
			continue
		}
		d := int64(math.Float32bits(g)) - int64(math.Float32bits(want))
		if d < -1 || d > 1 || g != g || want != want {
			t.Fatalf("exp(%g - %g) = %g, want %g", v, float32(m), g, want)
		}
		diffs++
	}
	if diffs > len(w)/1000000+2 {
		t.Errorf("%d of %d values one ulp off, want almost none", diffs, len(w))
	}
	t.Logf("%d values, %d one ulp off", len(w), diffs)
}

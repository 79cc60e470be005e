package ops

import (
	"math"
	"testing"
)

func TestCompare(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	tests := []struct {
		name      string
		got, want []float32
		limit     float64
		failure   string
		index     int
		nmse      float64
		maxAbs    float64
	}{
		{"equal", []float32{1, 2, 3}, []float32{1, 2, 3}, 1e-7, FailNone, 0, 0, 0},
		{"nmse over", []float32{1, 2}, []float32{1, 2.1}, 1e-7, FailNMSE, 0, float64(float32(-0.0999999*-0.0999999)) / 5, 0.1},
		{"nmse under", []float32{3, 4}, []float32{3, 4.001}, 1e-6, FailNone, 0, float64(float32((4-float32(4.001))*(4-float32(4.001)))) / 25, 0.001},
		{"nan in got", []float32{1, nan, 3}, []float32{1, 2, 3}, 1, FailNaN, 1, math.NaN(), 0},
		{"nan in want", []float32{1, 2, 3}, []float32{1, 2, nan}, 1, FailNaN, 2, math.NaN(), 0},
		{"inf both same sign", []float32{inf, 1}, []float32{inf, 1}, 1e-7, FailNone, 0, math.NaN(), 0},
		{"flt max counts as inf", []float32{math.MaxFloat32, 1}, []float32{inf, 1}, 1e-7, FailNone, 0, math.Inf(1), 0},
		{"inf sign", []float32{1, inf}, []float32{1, -inf}, 1, FailInfSign, 1, math.NaN(), 0},
		{"inf mismatch", []float32{1, 2}, []float32{1, -inf}, 1, FailInfMismatch, 1, math.NaN(), 0},
		{"zero output", []float32{0, 0}, []float32{0, 0}, 0, FailNone, 0, math.NaN(), 0},
		{"length", []float32{1}, []float32{1, 2}, 1, FailLengthDiffer, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.got, tt.want, tt.limit)
			if c.Failure != tt.failure {
				t.Fatalf("failure = %q (%s), want %q", c.Failure, c, tt.failure)
			}
			if tt.failure != FailNone && tt.failure != FailNMSE && c.Index != tt.index {
				t.Errorf("index = %d, want %d", c.Index, tt.index)
			}
			if tt.failure == FailNone || tt.failure == FailNMSE {
				if !(math.IsNaN(tt.nmse) && math.IsNaN(c.NMSE)) && !(math.IsInf(tt.nmse, 1) && math.IsInf(c.NMSE, 1)) &&
					math.Abs(c.NMSE-tt.nmse) > 1e-6*math.Abs(tt.nmse)+1e-12 {
					t.Errorf("NMSE = %g, want %g", c.NMSE, tt.nmse)
				}
				if math.Abs(c.MaxAbsErr-tt.maxAbs) > 1e-6 {
					t.Errorf("max abs = %g, want %g", c.MaxAbsErr, tt.maxAbs)
				}
			}
			if c.String() == "" {
				t.Error("empty String")
			}
		})
	}
}

// TestNMSEDenominatorIsGot pins test-backend-ops' asymmetry: the
// denominator is the tested output's energy.
func TestNMSEDenominatorIsGot(t *testing.T) {
	if got := NMSE([]float32{2}, []float32{1}); got != 0.25 {
		t.Errorf("NMSE(got=2, want=1) = %g, want 0.25", got)
	}
	if got := NMSE([]float32{1}, []float32{2}); got != 1 {
		t.Errorf("NMSE(got=1, want=2) = %g, want 1", got)
	}
}

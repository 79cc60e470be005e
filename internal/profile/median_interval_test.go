package profile

import (
	"math"
	"testing"
)

// binomTail is P(B <= j) for B ~ Binomial(n, 1/2), by exact integer
// binomial coefficients (independent of MedianInterval's log-gamma sums).
func binomTail(n, j int) float64 {
	c, sum := 1.0, 0.0
	for i := 0; i <= j; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}
		sum += c
	}
	return sum / math.Pow(2, float64(n))
}

func TestMedianInterval(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // reversed: MedianInterval must sort
		}
		return xs
	}
	tests := []struct {
		n        int
		lo, hi   float64 // ranks, 1-based: the values of seq(n) sorted are 1..n
		coverage float64
	}{
		// Textbook ranks of the 95% interval of the median (e.g. Conover,
		// Practical Nonparametric Statistics, table A3): n=10 → 2..9,
		// n=20 → 6..15, n=6 → 1..6.
		{10, 2, 9, 1 - 2*binomTail(10, 1)},
		{20, 6, 15, 1 - 2*binomTail(20, 5)},
		{6, 1, 6, 1 - 2*binomTail(6, 0)},
		// Too small for 95%: the range, with its own coverage.
		{5, 1, 5, 1 - 2.0/32},
		{2, 1, 2, 0.5},
		{1, 1, 1, 0},
	}
	for _, tt := range tests {
		lo, hi, cov := MedianInterval(seq(tt.n), 0.95)
		if lo != tt.lo || hi != tt.hi || math.Abs(cov-tt.coverage) > 1e-12 {
			t.Errorf("n=%d: [%g, %g] coverage %.6f, want [%g, %g] %.6f", tt.n, lo, hi, cov, tt.lo, tt.hi, tt.coverage)
		}
		if tt.n >= 6 && cov < 0.95 {
			t.Errorf("n=%d: coverage %.4f below 95%%", tt.n, cov)
		}
	}
	// A large sample: the interval is the widest that still keeps each
	// tail at most 2.5%, so one rank narrower would exceed it.
	n := 1001
	lo, hi, cov := MedianInterval(seq(n), 0.95)
	k := int(lo)
	if int(hi) != n+1-k || binomTail(n, k-1) > 0.025 || binomTail(n, k) <= 0.025 || cov < 0.95 {
		t.Errorf("n=%d: [%g, %g] coverage %g", n, lo, hi, cov)
	}
	if lo, hi, cov := MedianInterval(nil, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) || !math.IsNaN(cov) {
		t.Errorf("empty: %g %g %g", lo, hi, cov)
	}
}

package profile

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want SampleSummary
	}{
		{"empty", nil, SampleSummary{}},
		{"one", []float64{7}, SampleSummary{N: 1, Min: 7, Max: 7, Median: 7, Mean: 7}},
		{"odd", []float64{5, 1, 3}, SampleSummary{N: 3, Min: 1, Max: 5, Median: 3, Mean: 3}},
		{"even", []float64{4, 1, 3, 10}, SampleSummary{N: 4, Min: 1, Max: 10, Median: 3.5, Mean: 4.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := Summarize(tt.in); got != tt.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.in, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Summarize modified its input")
				}
			}
		})
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Mean(nil)) {
		t.Errorf("Median/Mean of an empty sample should be NaN")
	}
	if got := Median([]float64{9, 2, 4, 8}); got != 6 {
		t.Errorf("Median = %v, want 6", got)
	}
}

// The expected p-values below were computed independently with Python
// (fractions + itertools.combinations enumerating every n1-subset of the
// pooled mid-ranks for the exact ones; math.erfc with the tie-corrected
// variance n1*n2/12*((n+1) - Σ(t³-t)/(n(n-1))) and a 0.5 continuity
// correction for the normal ones):
//
//	exact([1,2,3],[4,5,6])                          U=0    p=0.1          (2/20)
//	exact([1..5],[6..10])                           U=0    p=0.0079365    (2/252)
//	exact([1,2,2,3,5],[2,3,4,4,6,7])                U=6.5  p=0.12554112554
//	exact([10,12,12,15,20,21],[12,18,25,25,30,31,40]) U=6  p=0.02913752914
//	exact([3,3,3,3],[3,3,3,3])                      U=8    p=1
//	normal([1..30],[20.5..49.5])                    U=55   p=5.461746657e-09
//	normal([i%7, i<40],[(i%7)+1, i<35])             U=490  p=0.02475801619
func TestMannWhitneyU(t *testing.T) {
	seq := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	tests := []struct {
		name   string
		x, y   []float64
		u, p   float64
		exact  bool
		ties   bool
		relTol float64
	}{
		{"separated 3v3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true, false, 1e-12},
		{"separated 5v5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, true, false, 1e-12},
		{"reversed 5v5", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, true, false, 1e-12},
		{"ties small", []float64{1, 2, 2, 3, 5}, []float64{2, 3, 4, 4, 6, 7}, 6.5, 0.12554112554112554, true, true, 1e-12},
		{"ties 6v7", []float64{10, 12, 12, 15, 20, 21}, []float64{12, 18, 25, 25, 30, 31, 40}, 6, 0.029137529137529136, true, true, 1e-12},
		{"all equal", []float64{3, 3, 3, 3}, []float64{3, 3, 3, 3}, 8, 1, true, true, 0},
		{"normal no ties", seq(30, func(i int) float64 { return float64(i + 1) }), seq(30, func(i int) float64 { return float64(i) + 20.5 }),
			55, 5.461746656616969e-09, false, false, 1e-9},
		{"normal ties", seq(40, func(i int) float64 { return float64(i % 7) }), seq(35, func(i int) float64 { return float64(i%7 + 1) }),
			490, 0.02475801618546681, false, true, 1e-9},
		{"empty", nil, []float64{1, 2}, 0, 1, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MannWhitneyU(tt.x, tt.y)
			if got.U != tt.u || !near(got.P, tt.p, tt.relTol) || got.Exact != tt.exact || got.Ties != tt.ties {
				t.Errorf("MannWhitneyU = %+v, want U=%v P=%v exact=%v ties=%v", got, tt.u, tt.p, tt.exact, tt.ties)
			}
		})
	}
}

// bruteUTestP enumerates every way to assign len(x) of the pooled values
// to the first sample and counts rank sums at least as extreme: the
// definition of the exact test, written without the dynamic programme.
func bruteUTestP(x, y []float64) float64 {
	pool := append(append([]float64(nil), x...), y...)
	n, k := len(pool), len(x)
	// rank2[i]: twice the mid-rank of pool[i], by counting.
	rank2 := make([]int, n)
	for i, v := range pool {
		less, eq := 0, 0
		for _, w := range pool {
			if w < v {
				less++
			} else if w == v {
				eq++
			}
		}
		rank2[i] = 2*less + eq + 1
	}
	obs := 0
	for i := 0; i < k; i++ {
		obs += rank2[i]
	}
	var le, ge, all int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != k {
			continue
		}
		s := 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += rank2[i]
			}
		}
		all++
		if s <= obs {
			le++
		}
		if s >= obs {
			ge++
		}
	}
	return math.Min(1, 2*float64(min(le, ge))/float64(all))
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestMannWhitneyUMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n1, n2 := 1+r.IntN(7), 1+r.IntN(7)
		levels := 2 + r.IntN(10) // few levels: many ties
		x := make([]float64, n1)
		y := make([]float64, n2)
		for i := range x {
			x[i] = float64(r.IntN(levels))
		}
		for i := range y {
			y[i] = float64(r.IntN(levels) + r.IntN(2))
		}
		got := MannWhitneyU(x, y).P
		want := bruteUTestP(x, y)
		if !near(got, want, 1e-12) {
			t.Fatalf("x=%v y=%v: P=%v, enumeration gives %v", x, y, got, want)
		}
	}
}

func TestMannWhitneyUNormalCloseToExact(t *testing.T) {
	// At the switch-over size the approximation should agree with the
	// exact distribution to within a few percent on a mid-range p.
	x := make([]float64, 25)
	y := make([]float64, 25)
	for i := range x {
		x[i] = float64(2 * i)
		y[i] = float64(2*i+1) + 9
	}
	exact := MannWhitneyU(x, y)
	if !exact.Exact {
		t.Fatalf("n=50 should be exact")
	}
	approx := mannWhitneyU(x, y, 0)
	if approx.Exact || approx.U != exact.U {
		t.Fatalf("forced normal approximation: %+v", approx)
	}
	if MannWhitneyU(append(x, 1000.5), y).Exact {
		t.Fatalf("n=51 should use the normal approximation")
	}
	if exact.P < 0.01 || exact.P > 0.5 {
		t.Fatalf("test data should give a mid-range p, got %v", exact.P)
	}
	if approx.P < exact.P*0.9 || approx.P > exact.P*1.1 {
		t.Errorf("normal approximation p=%v far from exact p=%v", approx.P, exact.P)
	}
}

func TestMinUTestP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{0, 5, 1},
		{1, 1, 1},
		{3, 3, 0.1},       // 2/20
		{4, 4, 2.0 / 70},  // first equal-size pair below 0.05
		{1, 39, 2.0 / 40}, // exactly 0.05: not below alpha
		{2, 8, 2.0 / 45},
	}
	for _, tt := range tests {
		if got := MinUTestP(tt.n1, tt.n2); !near(got, tt.want, 1e-9) {
			t.Errorf("MinUTestP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
	// It is what MannWhitneyU gives on fully separated samples.
	if got, want := MannWhitneyU([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}).P, MinUTestP(4, 4); !near(got, want, 1e-12) {
		t.Errorf("separated 4v4 P=%v, MinUTestP=%v", got, want)
	}
}

func TestCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	noisy := func(n int, centre, spread float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = centre + spread*(r.Float64()-0.5)
		}
		return out
	}
	def := DefaultCompareOptions()
	tests := []struct {
		name      string
		base, new []float64
		o         CompareOptions
		verdict   Verdict
		tested    bool
		reason    string
	}{
		{"new", nil, []float64{1}, def, VerdictNew, false, "only in new"},
		{"gone", []float64{1}, nil, def, VerdictGone, false, "only in base"},
		{"identical", []float64{100, 100}, []float64{100, 100}, def, VerdictSame, false, "within threshold"},
		{"one sample slower", []float64{100}, []float64{120}, def, VerdictSlower, false, "too few samples for the rank test: threshold only"},
		{"one sample faster", []float64{100}, []float64{80}, def, VerdictFaster, false, "too few samples for the rank test: threshold only"},
		{"one sample within", []float64{100}, []float64{104}, def, VerdictSame, false, "within threshold"},
		{"real slowdown", noisy(20, 1000, 50), noisy(20, 1200, 50), def, VerdictSlower, true, "significant"},
		{"real speedup", noisy(20, 1000, 50), noisy(20, 800, 50), def, VerdictFaster, true, "significant"},
		// Overlapping samples whose medians differ by more than 5%: the
		// rank test refuses to call it, so it is noise.
		{"noise over threshold", []float64{90, 140, 100, 130, 95, 120}, []float64{135, 92, 125, 98, 145, 110}, def, VerdictSame, true, "not significant"},
		{"below min-time", []float64{100}, []float64{300}, CompareOptions{Threshold: 0.05, Alpha: 0.05, MinTime: 1000}, VerdictSame, false, "below min-time"},
		{"crosses min-time", []float64{100}, []float64{3000}, CompareOptions{Threshold: 0.05, Alpha: 0.05, MinTime: 1000}, VerdictSlower, false, "too few samples for the rank test: threshold only"},
		{"zero base", []float64{0, 0, 0, 0}, []float64{5, 5, 5, 5}, def, VerdictSlower, true, "significant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.base, tt.new, tt.o)
			if c.Verdict != tt.verdict || c.Tested != tt.tested || c.Reason != tt.reason {
				t.Errorf("Compare = verdict %s tested %v reason %q (change %v, p %v), want %s %v %q",
					c.Verdict, c.Tested, c.Reason, c.Change, c.P, tt.verdict, tt.tested, tt.reason)
			}
			if c.Tested == math.IsNaN(c.P) {
				t.Errorf("Tested=%v but P=%v", c.Tested, c.P)
			}
		})
	}
}

// Same distribution, different random draws: the rank test must keep the
// false-alarm rate near alpha even though the medians wobble by more than
// the threshold.
func TestCompareNoiseFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	draw := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 1000 * math.Exp(0.3*r.NormFloat64()) // wide, skewed noise
		}
		return out
	}
	o := DefaultCompareOptions()
	alarms, overThreshold := 0, 0
	const trials = 400
	for i := 0; i < trials; i++ {
		c := Compare(draw(10), draw(10), o)
		if math.Abs(c.Change) > o.Threshold {
			overThreshold++
		}
		if c.Verdict != VerdictSame {
			alarms++
		}
	}
	if overThreshold < trials/4 {
		t.Fatalf("test noise too small: only %d of %d medians moved more than the threshold", overThreshold, trials)
	}
	if alarms > trials/10 {
		t.Errorf("%d of %d noise-only comparisons were called a change (want about alpha = 5%%)", alarms, trials)
	}
}

func BenchmarkMannWhitneyUExact50(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 25)
	y := make([]float64, 25)
	for i := range x {
		x[i], y[i] = float64(r.IntN(20)), float64(r.IntN(20))
	}
	for b.Loop() {
		MannWhitneyU(x, y)
	}
}

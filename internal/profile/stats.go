package profile

import (
	"math"
	"sort"
)

// This file holds the statistics used by Diff: order statistics and the
// Mann-Whitney U (Wilcoxon rank-sum) test, the test benchstat uses to
// decide whether two sets of measurements differ. Everything here is a
// pure function of its arguments.

// SampleSummary describes one sample: the measurements of one kernel (or copy
// direction) in one trace.
type SampleSummary struct {
	// N is the number of measurements.
	N int
	// Min, Max, Median and Mean are in the unit of the measurements.
	Min, Max, Median, Mean float64
}

// Summarize returns the summary of xs. xs is not modified. An empty
// sample gives a zero SampleSummary.
func Summarize(xs []float64) SampleSummary {
	if len(xs) == 0 {
		return SampleSummary{}
	}
	s := statsSorted(xs)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return SampleSummary{
		N:      len(s),
		Min:    s[0],
		Max:    s[len(s)-1],
		Median: medianSorted(s),
		Mean:   sum / float64(len(s)),
	}
}

// Median returns the median of xs (the mean of the two middle values when
// len(xs) is even), or NaN for an empty sample. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return medianSorted(statsSorted(xs))
}

// Mean returns the arithmetic mean of xs, or NaN for an empty sample.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// MedianInterval returns a distribution-free confidence interval of the
// median of xs (not modified): the order statistics x(k) and x(n+1-k)
// (1-based) for the largest k whose interval covers the median with
// probability at least conf, and that probability (the binomial
// 1 - 2·P(B <= k-1), B ~ Binomial(n, 1/2)). A sample too small to reach
// conf (fewer than 6 measurements at 95%) gets its range, min to max, and
// the smaller coverage that range has; an empty sample gets NaNs.
func MedianInterval(xs []float64, conf float64) (lo, hi, level float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	s := statsSorted(xs)
	tail := (1 - conf) / 2
	lnHalf := float64(n) * math.Log(0.5)
	lnN, _ := math.Lgamma(float64(n + 1))
	pmf := func(j int) float64 { // P(B = j)
		a, _ := math.Lgamma(float64(j + 1))
		b, _ := math.Lgamma(float64(n - j + 1))
		return math.Exp(lnN - a - b + lnHalf)
	}
	// The interval [x(k), x(n+1-k)] misses the median with probability
	// 2·P(B <= k-1); k = 1 (the range) is the fallback.
	k, miss := 1, math.Exp(lnHalf)
	c := 0.0
	for j := 0; j+1 <= (n+1)/2; j++ {
		c += pmf(j)
		if c > tail {
			break
		}
		k, miss = j+1, c
	}
	return s[k-1], s[n-k], 1 - 2*miss
}

func statsSorted(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// UTestExactLimit is the largest total sample size n1+n2 for which
// MannWhitneyU computes the exact permutation distribution of U (ties
// included); above it, the normal approximation is used.
const UTestExactLimit = 50

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	// N1 and N2 are the sizes of the two samples.
	N1, N2 int
	// U is the U statistic of the first sample: the number of pairs
	// (x, y) with x > y, counting ties as one half.
	U float64
	// P is the two-sided p-value: the probability, if both samples came
	// from the same distribution, of a U at least as far from its mean.
	P float64
	// Exact is true when P comes from the exact distribution rather than
	// the normal approximation.
	Exact bool
	// Ties is true when some values occur more than once.
	Ties bool
}

// MannWhitneyU runs a two-sided Mann-Whitney U test of xs against ys. For
// n1+n2 <= UTestExactLimit the p-value is exact: it counts, among all ways
// of choosing n1 of the pooled (mid-)ranks, those whose rank sum is at
// least as extreme as the observed one, so it stays exact with ties. For
// larger samples it uses the normal approximation with tie correction and
// continuity correction. Either sample empty gives P = 1.
func MannWhitneyU(xs, ys []float64) UTest {
	return mannWhitneyU(xs, ys, UTestExactLimit)
}

func mannWhitneyU(xs, ys []float64, exactLimit int) UTest {
	n1, n2 := len(xs), len(ys)
	res := UTest{N1: n1, N2: n2, P: 1, Exact: true}
	if n1 == 0 || n2 == 0 {
		return res
	}
	n := n1 + n2
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n)
	for _, x := range xs {
		all = append(all, obs{x, true})
	}
	for _, y := range ys {
		all = append(all, obs{y, false})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })

	// Doubled mid-ranks are integers: a tie group occupying ranks
	// i+1..j has mid-rank (i+1+j)/2, doubled i+1+j.
	rank2 := make([]int, n)
	r1x2 := 0    // doubled rank sum of the first sample
	tieSum := 0. // sum over tie groups of t^3 - t
	for i := 0; i < n; {
		j := i + 1
		for j < n && all[j].v == all[i].v {
			j++
		}
		for k := i; k < j; k++ {
			rank2[k] = i + 1 + j
			if all[k].first {
				r1x2 += i + 1 + j
			}
		}
		if t := float64(j - i); t > 1 {
			res.Ties = true
			tieSum += t*t*t - t
		}
		i = j
	}
	res.U = float64(r1x2)/2 - float64(n1*(n1+1))/2

	if n <= exactLimit {
		res.P = exactRankSumP(rank2, n1, r1x2)
		return res
	}
	res.Exact = false
	mu := float64(n1*n2) / 2
	fn := float64(n)
	variance := float64(n1*n2) / 12 * ((fn + 1) - tieSum/(fn*(fn-1)))
	if variance <= 0 {
		return res // every value identical: no evidence of a difference
	}
	z := (math.Abs(res.U-mu) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	res.P = math.Min(1, math.Erfc(z/math.Sqrt2))
	return res
}

// exactRankSumP returns the two-sided p-value of the observed doubled rank
// sum obs of a sample of size k drawn from the pooled doubled ranks
// rank2, under the null hypothesis that every k-subset is equally likely.
func exactRankSumP(rank2 []int, k, obs int) float64 {
	n := len(rank2)
	// By symmetry the test of the smaller sample is the same test: the
	// other sample's rank sum is the total minus this one.
	total := 0
	for _, r := range rank2 {
		total += r
	}
	if k > n-k {
		k = n - k
		obs = total - obs
	}
	maxSum := total
	// cnt[j][s]: number of j-subsets of the ranks seen so far whose doubled
	// rank sum is s. float64 counts are exact up to 2^53, well above
	// C(50, 25) ~ 1.3e14.
	cnt := make([][]float64, k+1)
	for j := range cnt {
		cnt[j] = make([]float64, maxSum+1)
	}
	cnt[0][0] = 1
	seen := 0 // sum of the ranks processed so far: no subset sum exceeds it
	for i, r := range rank2 {
		hi := min(i+1, k)
		for j := hi; j >= 1; j-- {
			prev, cur := cnt[j-1][:seen+1], cnt[j]
			for s, c := range prev {
				if c != 0 {
					cur[s+r] += c
				}
			}
		}
		seen += r
	}
	var all, le, ge float64
	for s, c := range cnt[k] {
		if c == 0 {
			continue
		}
		all += c
		if s <= obs {
			le += c
		}
		if s >= obs {
			ge += c
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/all)
}

// MinUTestP returns the smallest two-sided p-value a Mann-Whitney U test
// of samples of sizes n1 and n2 can give (when the samples do not overlap
// and have no ties): 2 / C(n1+n2, n1), or 1 when either is empty. When it
// is not below alpha the test can never call a difference significant, so
// Compare falls back to the threshold alone.
func MinUTestP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// log C(n, k) via lgamma keeps large samples finite.
	n := float64(n1 + n2)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	logC := lg(n+1) - lg(float64(n1)+1) - lg(float64(n2)+1)
	return math.Min(1, 2*math.Exp(-logC))
}

// Verdict is the outcome of comparing one kernel (or copy direction)
// between a base and a new trace.
type Verdict string

// Verdicts.
const (
	VerdictSame   Verdict = "same"
	VerdictFaster Verdict = "faster"
	VerdictSlower Verdict = "slower"
	VerdictNew    Verdict = "new"  // only in the new trace
	VerdictGone   Verdict = "gone" // only in the base trace
)

// CompareOptions decide what counts as a change.
type CompareOptions struct {
	// Threshold is the smallest relative change of the median that can
	// count, as a fraction (0.05 = 5%).
	Threshold float64
	// Alpha is the significance level of the rank test.
	Alpha float64
	// MinTime is a floor in the unit of the samples: when both medians are
	// below it, the kernel is too short to judge and is always "same".
	MinTime float64
}

// DefaultCompareOptions are the defaults of et profile diff: 5%, alpha 0.05,
// no time floor.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{Threshold: 0.05, Alpha: 0.05}
}

// Comparison is the verdict on two samples and why.
type Comparison struct {
	Verdict Verdict
	Base    SampleSummary
	New     SampleSummary
	// Change is (new median − base median) / base median, as a fraction;
	// +Inf when the base median is 0 and the new one is not, NaN when
	// either sample is empty.
	Change float64
	// Tested is true when the rank test was applied; P is then its
	// p-value, else NaN.
	Tested bool
	P      float64
	// Reason says in a few words why the verdict is what it is.
	Reason string
}

// Compare compares base and new measurements of one kernel. The verdict
// is "slower" (or "faster") only when the median changed by more than
// o.Threshold, at least one median reaches o.MinTime, and — when the
// sample sizes allow a Mann-Whitney U test to reach o.Alpha at all — the
// test's p-value is below o.Alpha. With too few samples for the test,
// the threshold alone decides and Reason says so. An empty base gives
// "new", an empty new sample "gone".
func Compare(base, new []float64, o CompareOptions) Comparison {
	c := Comparison{Base: Summarize(base), New: Summarize(new), Change: math.NaN(), P: math.NaN()}
	switch {
	case len(base) == 0 && len(new) == 0:
		c.Verdict, c.Reason = VerdictSame, "no samples"
		return c
	case len(base) == 0:
		c.Verdict, c.Reason = VerdictNew, "only in new"
		return c
	case len(new) == 0:
		c.Verdict, c.Reason = VerdictGone, "only in base"
		return c
	}
	c.Change = relChange(c.Base.Median, c.New.Median)
	if c.Base.Median < o.MinTime && c.New.Median < o.MinTime {
		c.Verdict, c.Reason = VerdictSame, "below min-time"
		return c
	}
	if MinUTestP(len(base), len(new)) < o.Alpha {
		t := MannWhitneyU(base, new)
		c.Tested, c.P = true, t.P
	}
	if math.IsNaN(c.Change) || math.Abs(c.Change) <= o.Threshold {
		c.Verdict = VerdictSame
		c.Reason = "within threshold"
		if c.Tested && c.P >= o.Alpha {
			c.Reason = "not significant"
		}
		return c
	}
	if c.Tested && c.P >= o.Alpha {
		c.Verdict, c.Reason = VerdictSame, "not significant"
		return c
	}
	if c.Change > 0 {
		c.Verdict = VerdictSlower
	} else {
		c.Verdict = VerdictFaster
	}
	if c.Tested {
		c.Reason = "significant"
	} else {
		c.Reason = "too few samples for the rank test: threshold only"
	}
	return c
}

func relChange(base, new float64) float64 {
	switch {
	case base == new:
		return 0
	case base == 0:
		return math.Inf(1)
	}
	return (new - base) / base
}

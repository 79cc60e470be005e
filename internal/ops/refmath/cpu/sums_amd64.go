package cpu

// The norms' sums and the row scaling of every amd64 build: AVX assembly
// (sums_amd64.s) in the lane order the tests pin (TestSumsLaneOrder).

//go:noescape
func scaleF32AVX(dst, x *float32, s float32, n int)

// sumsF32AVX adds up the n values at x (mode 0), their squares (1), or
// those of d = x − m, storing d at dst (2), in four float64x4 partial sums
// that it stores in out (see sum16Lanes).
//
//go:noescape
func sumsF32AVX(dst, x *float32, m float32, n int, mode int, out *[16]float64)

// ScaleInto is dst = x·s.
func (ks *Kernels) ScaleInto(dst, x []float32, s float32) {
	n := len(x) &^ 7
	if !ks.Row || n == 0 {
		scaleScalar(dst, x, s)
		return
	}
	dst = dst[:len(x)]
	scaleF32AVX(&dst[0], &x[0], s, n)
	scaleScalar(dst[n:], x[n:], s)
}

// sum16Lanes is the vector build's sum16 of the partial sums a, b, c, d
// (out[0:4], [4:8], [8:12], [12:16]): lane-wise (a+b) + (c+d), then
// (l0+l1) + (l2+l3).
func sum16Lanes(out *[16]float64) float64 {
	var v [4]float64
	for l := range v {
		v[l] = (out[l] + out[4+l]) + (out[8+l] + out[12+l])
	}
	return (v[0] + v[1]) + (v[2] + v[3])
}

// The modes of sumsF32AVX.
const (
	sumValues   = 0 // Σ x
	sumSquares  = 1 // Σ x·x
	sumCentered = 2 // dst = x − m, Σ d·d
)

// sumsRow is sumsF32AVX's sum of the first len(x) &^ 7 values; ok is
// false (nothing done) without the assembly or 8 values.
func (ks *Kernels) sumsRow(dst, x []float32, m float32, mode int) (s float64, n int, ok bool) {
	n = len(x) &^ 7
	if !ks.Row || n == 0 {
		return 0, 0, false
	}
	var out [16]float64
	d := &x[0]
	if mode == sumCentered {
		dst = dst[:len(x)]
		d = &dst[0]
	}
	sumsF32AVX(d, &x[0], m, n, mode, &out)
	return sum16Lanes(&out), n, true
}

// SumRow is SumScalar(x) in the lane order of the build's kernel (the
// norms' float64 sums).
func (ks *Kernels) SumRow(x []float32) float64 {
	s, n, ok := ks.sumsRow(nil, x, 0, sumValues)
	if !ok {
		return SumScalar(x)
	}
	return s + SumScalar(x[n:])
}

// SumSqRow is SumSqScalar(x) in the lane order of the build's kernel.
func (ks *Kernels) SumSqRow(x []float32) float64 {
	s, n, ok := ks.sumsRow(nil, x, 0, sumSquares)
	if !ok {
		return SumSqScalar(x)
	}
	return s + SumSqScalar(x[n:])
}

// CenterSumSqRow sets dst = x - m and returns Σ float64(dst[i]²), in the
// lane order of the build's kernel.
func (ks *Kernels) CenterSumSqRow(dst, x []float32, m float32) float64 {
	s, n, ok := ks.sumsRow(dst, x, m, sumCentered)
	if !ok {
		return CenterSumSqScalar(dst, x, m)
	}
	return s + CenterSumSqScalar(dst[n:], x[n:], m)
}

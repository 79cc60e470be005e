//go:build !goexperiment.simd

package cpu

import (
	"github.com/ainekko/et/internal/ops/codec"
)

// The plain build's row kernels on amd64 (GOEXPERIMENT=simd off): the
// element-wise ones, the norms' sums, rope's rotations and the q8_0
// dequantization in assembly (rowvec_plain_amd64.s) on CPUs with AVX2 and
// FMA (siluCPU's check), with the arithmetic of the vector build's
// archsimd kernels in the same order, so both builds give the same bits;
// rope's sines and cosines (sincosRow) are the scalar code's.

//go:noescape
func scaleF32AVX(dst, x *float32, s float32, n int)

// sumsF32AVX adds up the n values at x (mode 0), their squares (1), or
// those of d = x − m, storing d at dst (2), in four float64x4 partial sums
// that it stores in out (see sum16Lanes).
//
//go:noescape
func sumsF32AVX(dst, x *float32, m float32, n int, mode int, out *[16]float64)

// dequantQ8_0AVX is dequantQ8_0Scalar of nb blocks (needs F16C too).
//
//go:noescape
func dequantQ8_0AVX(src *byte, dst *float32, nb int)

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

// DequantQ8_0Row is DequantizeRow(Q8_0, src, dst).
func (ks *Kernels) DequantQ8_0Row(src []byte, dst []float32) {
	nb := len(dst) / codec.QK8_0
	if !ks.Row || !ks.F16C || nb == 0 {
		dequantQ8_0Scalar(src, dst)
		return
	}
	src = src[:nb*34]
	dequantQ8_0AVX(&src[0], &dst[0], nb)
}

//go:noescape
func ropeNeoxAVX(dst, x, c, s *float32, h, n int)

//go:noescape
func ropeNormalAVX(dst, x, cc, ss *float32, n int)

// RopeNeoxRow is ropeNeoxScalar: neox rotation of x by cosines c and sines
// s into dst.
func (ks *Kernels) RopeNeoxRow(dst, x, c, s []float32) {
	h := len(c)
	n := h &^ 7
	if !ks.Row || n == 0 {
		ropeNeoxScalar(dst, x, c, s)
		return
	}
	s, x, dst = s[:h], x[:2*h], dst[:2*h]
	ropeNeoxAVX(&dst[0], &x[0], &c[0], &s[0], h, n)
	for i := n; i < h; i++ { // the tail pairs (i, i+h)
		x0, x1 := x[i], x[i+h]
		dst[i] = float32(x0*c[i]) - float32(x1*s[i])
		dst[i+h] = float32(x0*s[i]) + float32(x1*c[i])
	}
}

// RopeNormalRow is ropeNormalScalar: normal rotation of x in the expanded
// layout into dst.
func (ks *Kernels) RopeNormalRow(dst, x, cc, ss []float32) {
	n2 := len(cc) &^ 1
	n := n2 &^ 7
	if !ks.Row || n == 0 {
		ropeNormalScalar(dst, x, cc, ss)
		return
	}
	ss, x, dst = ss[:n2], x[:n2], dst[:n2]
	ropeNormalAVX(&dst[0], &x[0], &cc[0], &ss[0], n)
	ropeNormalScalar(dst[n:], x[n:], cc[n:n2], ss[n:])
}

// SincosRow sets c[i] = cos(th[i])·m and s[i] = sin(th[i])·m and reports
// whether it did (false: the caller runs the scalar code).
func (ks *Kernels) SincosRow(c, s, th []float32, m float32) bool {
	return false
}

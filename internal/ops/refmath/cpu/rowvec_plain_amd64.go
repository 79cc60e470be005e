//go:build !goexperiment.simd

package cpu

import (
	"github.com/ainekko/et/internal/ops/codec"
)

// The plain build's row kernels on amd64 (GOEXPERIMENT=simd off): the
// element-wise ones, the norms' sums, rope's rotations and the q8_0
// dequantization in assembly (rowvec_plain_amd64.s) on CPUs with AVX2 and
// FMA (Kernels.Row), with the arithmetic of the vector build's
// archsimd kernels in the same order, so both builds give the same bits;
// rope's sines and cosines (sincosRow) are the scalar code's.

// dequantQ8_0AVX is dequantQ8_0Scalar of nb blocks (needs F16C too).
//
//go:noescape
func dequantQ8_0AVX(src *byte, dst *float32, nb int)

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

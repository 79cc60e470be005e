//go:build !goexperiment.simd

package cpu

import (
	"math"
)

// soft_max's first steps and last scaling in the plain build on amd64 by
// the assembly of rowvec_plain_amd64.s (AVX2), as the vector build's
// SoftMaxPrepVec and scaleRowVec do them in eight lanes: the same bits.

//go:noescape
func softMaxPrepAVX(w, x, m *float32, scale, slope float32, n int, out *[8]float32) int

// SoftMaxPrepVec is softmax_simd_amd64.go's: w[i] = x[i]*scale (+
// slope*mrow[i]), returning max_i w[i] (NaN if any w[i] is NaN); false,
// having done nothing, without AVX2 or eight values.
func (ks *Kernels) SoftMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	n := len(w)
	n8 := n &^ 7
	if !ks.Row || n8 == 0 {
		return 0, false
	}
	x = x[:n]
	var pm *float32
	if mrow != nil {
		mrow = mrow[:n]
		pm = &mrow[0]
	}
	var l [8]float32
	nan := softMaxPrepAVX(&w[0], &x[0], pm, scale, slope, n8, &l)
	m := max(max(l[0], l[1]), max(l[2], l[3]), max(max(l[4], l[5]), max(l[6], l[7])))
	for i := n8; i < n; i++ {
		w[i] = x[i] * scale
		if mrow != nil {
			w[i] += slope * mrow[i]
		}
		m = max(m, w[i])
	}
	if nan != 0 {
		return float32(math.NaN()), true
	}
	return m, true
}

// ScaleRowVec sets w[i] *= s; false, having done nothing, without AVX2 or
// eight values.
func (ks *Kernels) ScaleRowVec(w []float32, s float32) bool {
	if !ks.Row || len(w) < 8 {
		return false
	}
	ks.ScaleInto(w, w, s)
	return true
}

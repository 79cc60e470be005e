//go:build !amd64

package cpu

// Off amd64 soft_max runs its scalar loops.

// SoftMaxPrepVec is w[i] = x[i]·scale (+ slope·mrow[i]), returning max_i
// w[i]; false, having done nothing, without a kernel.
func (ks *Kernels) SoftMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	return 0, false
}

// ScaleRowVec sets w[i] *= s; false, having done nothing, without a
// kernel.
func (ks *Kernels) ScaleRowVec(w []float32, s float32) bool { return false }

//go:build !amd64

package cpu

// Off amd64 soft_max runs its scalar loops.

func (ks *Kernels) SoftMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	return 0, false
}

func (ks *Kernels) ScaleRowVec(w []float32, s float32) bool { return false }

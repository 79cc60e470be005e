//go:build !goexperiment.simd

package cpu

// detectVec sets the row kernels' assembly (rowvec_plain_amd64.s): the
// plain build has no archsimd kernels.
func detectVec(ks *Kernels) { ks.Row = ks.AVX2 }

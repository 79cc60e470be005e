//go:build goexperiment.simd && amd64

package cpu

import (
	"simd/archsimd"
)

// detectVec sets the archsimd families this CPU runs.
func detectVec(ks *Kernels) {
	ks.Vec = archsimd.X86.AVX2()
	ks.Vec512 = archsimd.X86.AVX512()
	ks.Tile4 = archsimd.X86.AVX512()
	ks.Row = archsimd.X86.AVX2()
	ks.Exp4 = archsimd.X86.AVX2() && archsimd.X86.FMA()
	ks.FA = archsimd.X86.AVX2() && archsimd.X86.FMA()
}

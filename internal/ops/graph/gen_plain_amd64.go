//go:build !goexperiment.simd

package graph

import (
	"unsafe"

	xcpu "golang.org/x/sys/cpu"
)

// The plain build's (GOEXPERIMENT=simd off) vector form of fillNormal's
// main loop: gen_simd_amd64.go's AVX-512 kernel in assembly
// (gen_plain_amd64.s), eight pairs per pass, the scalar path's bits. On
// CPUs without AVX-512 DQ the scalar loop runs.

// normalKernels lists the kernels this CPU runs, widest first, ending
// with 0 (the scalar code); tests run each.
func normalKernels() []int {
	if xcpu.X86.HasAVX512F && xcpu.X86.HasAVX512DQ { // the kernel's extensions; x/sys/cpu checks the OS's ZMM state
		return []int{8, 0}
	}
	return []int{0}
}

//go:noescape
func fillNormalAVX512(mean, std float64, z1 *[8]uint64, dst *float32, n int)

// fillNormalVec writes the first len(dst) &^ 15 values of dst, which
// starts on a pair boundary whose rng state (before its first draw) is
// z, by the kernel of pairs (8, or 0 for none), and returns how many it
// wrote: 0 without the kernel.
func fillNormalVec(pairs int, mean, std float64, z uint64, dst []float32) int {
	n := len(dst) &^ 15
	if pairs != 8 || n == 0 {
		return 0
	}
	var z1 [8]uint64
	for p := range z1 {
		z1[p] = z + uint64(2*p+1)*splitmixGamma
	}
	fillNormalAVX512(mean, std, &z1, (*float32)(unsafe.Pointer(&dst[0])), n)
	return n
}

// clearUpper does nothing: the kernel ends with VZEROUPPER.
func clearUpper() {}

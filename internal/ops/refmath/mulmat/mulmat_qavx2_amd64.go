package mulmat

//go:generate go test ./gen -run ^TestFilesUpToDate$/^qavx2$ -update

import (
	"unsafe"
)

// The q8_0 and q4_0 eight-row kernels by AVX2 and F16C in Go assembly
// (mulmat_qavx2_amd64.s), for CPUs without AVX-512 VNNI (Kernels.QAVX2):
// the VNNI kernels' arguments and results, bit for bit the scalar
// kernels' (NaNs aside: both NaN), in every amd64 build. In the plain
// build they are the quantized MulMat's vector code on AVX2 machines; in
// the GOEXPERIMENT=simd build they take the fused groups of rows the
// archsimd kernels took.

//go:noescape
func q8_0Rows8AVX2(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)

//go:noescape
func q4_0Rows8AVX2(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)

//go:noescape
func q8_0Rows8x2AVX2(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)

//go:noescape
func q4_0Rows8x2AVX2(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)

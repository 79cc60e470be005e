package mulmat

import (
	"unsafe"

	"github.com/ainekko/et/internal/ops"
)

// The q8_0 and q4_0 eight-row kernels for arm64 in Go assembly
// (mulmat_qneon_arm64.s): the AVX2 kernels' arguments and results, bit
// for bit the scalar kernels' (NaNs aside: both NaN). The *NEON kernels
// use ARMv8.0 Advanced SIMD alone (Kernels.NEON, every arm64), the *DOT
// kernels SDOT (Kernels.DotProd: the ARMv8.2 dot product, ASIMDDP). They
// take every group of eight rows of the quantized MulMat (qasm, fused8).

//go:noescape
func q8_0Rows8NEON(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32)

//go:noescape
func q4_0Rows8NEON(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32)

//go:noescape
func q8_0Rows8x2NEON(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32)

//go:noescape
func q4_0Rows8x2NEON(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32)

//go:noescape
func q8_0Rows8DOT(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32)

//go:noescape
func q4_0Rows8DOT(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32)

//go:noescape
func q8_0Rows8x2DOT(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32)

//go:noescape
func q4_0Rows8x2DOT(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32)

// dot8RNEON is dot8R of the fused rows w (of t) with the quants y, scales
// d and sums s of one activation row, by the arm64 kernels (ks.NEON).
func (ks *Kernels) dot8RNEON(t ops.Type, w *rows8, y []int8, d []float32, s []int32, nb int) (out [8]float32) {
	py, pd, ps := unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0])
	switch {
	case t == ops.Q8_0 && ks.DotProd:
		q8_0Rows8DOT(&w.p, py, pd, ps, nb, &out)
	case t == ops.Q8_0:
		q8_0Rows8NEON(&w.p, py, pd, ps, nb, &out)
	case ks.DotProd:
		q4_0Rows8DOT(&w.p, py, pd, ps, nb, &out)
	default:
		q4_0Rows8NEON(&w.p, py, pd, ps, nb, &out)
	}
	return out
}

// dot8R2NEON is dot8R2's two columns by the arm64 kernels (ks.NEON): the
// second column's quants, scales and sums at dd past the first's (its
// quants at 8·dd), as dot8R2 checks.
func (ks *Kernels) dot8R2NEON(t ops.Type, w *rows8, y []int8, d []float32, s []int32, dd uintptr, nb int, o *[16]float32) {
	py, pd, ps := unsafe.Pointer(&y[0]), unsafe.Pointer(&d[0]), unsafe.Pointer(&s[0])
	switch {
	case t == ops.Q8_0 && ks.DotProd:
		q8_0Rows8x2DOT(&w.p, py, pd, ps, dd, nb, o)
	case t == ops.Q8_0:
		q8_0Rows8x2NEON(&w.p, py, pd, ps, dd, nb, o)
	case ks.DotProd:
		q4_0Rows8x2DOT(&w.p, py, pd, ps, dd, nb, o)
	default:
		q4_0Rows8x2NEON(&w.p, py, pd, ps, dd, nb, o)
	}
}

package cpu

import (
	"unsafe"

	"github.com/ainekko/et/internal/ops"
)

// The eight-row dot products of the f16 and f32 MulMat with one column
// (mulmat_dot8_amd64.s) run in every amd64 build, GOEXPERIMENT=simd or
// not: in the plain build they are those shapes' only vector code
// (asmAlone). Their float32 operations per lane are dotF16Bytes' and
// dotF32's, in the same order, so the results are the same bits (NaN
// results aside: NaN either way).

// f16Dot8F16C sets out[r] to the eight running lane sums of row r (the
// halves at p[r]) against the n float32 activations at b, n a multiple of
// 8: lane j sums the products of the elements i ≡ j (mod 8) in order, each
// sum s = s + w·x by a multiply and a separate add (f16Dot4F16C for eight
// rows).
//
//go:noescape
func f16Dot8F16C(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)

// f32Dot8AVX is f16Dot8F16C for float32 weights (dotF32's lanes).
//
//go:noescape
func f32Dot8AVX(p *[8]unsafe.Pointer, b unsafe.Pointer, n int, out *[8][8]float32)

// dot8Kernel runs f16Dot8F16C (t F16) or f32Dot8AVX for Dot8F.
func dot8Kernel(t ops.Type, p *[8]unsafe.Pointer, b unsafe.Pointer, n int, s *[8][8]float32) {
	if t == ops.F16 {
		f16Dot8F16C(p, b, n, s)
	} else {
		f32Dot8AVX(p, b, n, s)
	}
}

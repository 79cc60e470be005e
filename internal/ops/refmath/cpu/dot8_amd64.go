package cpu

import (
	"encoding/binary"
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

// Dot8F is dotF16Bytes (t F16, by f16Dot8F16C) or dotF32Bytes (t F32, by
// f32Dot8AVX) of eight weight rows: eight streams from memory and eight
// independent chains of adds.
func Dot8F(t ops.Type, a *[8][]byte, b []float32) [8]float32 {
	esz := t.TypeSize()
	n := len(b)
	n8 := n &^ 7
	var p [8]unsafe.Pointer
	for j := range a {
		a[j] = a[j][:esz*n]
		if n8 > 0 {
			p[j] = unsafe.Pointer(&a[j][0])
		}
	}
	var s [8][8]float32
	if n8 > 0 {
		if t == ops.F16 {
			f16Dot8F16C(&p, unsafe.Pointer(&b[0]), n8, &s)
		} else {
			f32Dot8AVX(&p, unsafe.Pointer(&b[0]), n8, &s)
		}
	}
	tab := ops.F16ToF32Table()
	var out [8]float32
	for j := range a {
		for i := n8; i < n; i++ {
			var w float32
			if t == ops.F16 {
				w = tab[binary.LittleEndian.Uint16(a[j][2*i:])]
			} else {
				w = F32At(a[j], i)
			}
			s[j][0] += float32(w * b[i])
		}
		out[j] = Finish8(&s[j])
	}
	return out
}

//go:build goexperiment.simd && amd64

package ops

import (
	"encoding/binary"
	"unsafe"
)

// The f16 MulMat kernels in Go assembly (mulmat_f16c_amd64.s), used when
// the CPU has F16C (vecF16C): the halves are widened by VCVTPH2PS, one
// instruction per eight and exact for every half (a signalling NaN comes
// out quiet, which the multiply that follows would do anyway), in place of
// widenF16x8's integer bit-twiddling. The float32 operations per lane are
// those of dotF16Vec4R and of the register tiles, in the same order, so
// the results are bit-identical.

// vecF16C reports whether the F16C kernels run (tests turn it off).
var vecF16C = hasF16C

// f16Dot4F16C sets out[r] to the eight running lane sums of row r (the
// halves at p[r]) against the n float32 activations at b, n a multiple of
// 8: lane j sums the products of the elements i ≡ j (mod 8) in order, each
// sum s = s + w·x by a multiply and a separate add.
//
//go:noescape
func f16Dot4F16C(p *[4]unsafe.Pointer, b unsafe.Pointer, n int, out *[4][8]float32)

// widenF16F16C widens the n halves at src (n a multiple of 8) to the n
// float32s at dst.
//
//go:noescape
func widenF16F16C(dst, src unsafe.Pointer, n int)

// widenF16x4F16C is widenF16F16C of the n halves at each of src[0..3] to
// dst[0..3], the four rows read side by side.
//
//go:noescape
func widenF16x4F16C(src, dst *[4]unsafe.Pointer, n int)

// dotF16F16C4R is dotF16Vec4R by f16Dot4F16C.
func dotF16F16C4R(a0, a1, a2, a3 []byte, b []float32) [4]float32 {
	n := len(b)
	a0, a1, a2, a3 = a0[:2*n], a1[:2*n], a2[:2*n], a3[:2*n]
	n8 := n &^ 7
	var s [4][8]float32
	if n8 > 0 {
		p := [4]unsafe.Pointer{unsafe.Pointer(&a0[0]), unsafe.Pointer(&a1[0]), unsafe.Pointer(&a2[0]), unsafe.Pointer(&a3[0])}
		f16Dot4F16C(&p, unsafe.Pointer(&b[0]), n8, &s)
	}
	tab := f16ToF32Table()
	for i := n8; i < n; i++ {
		s[0][0] += float32(tab[binary.LittleEndian.Uint16(a0[2*i:])] * b[i])
		s[1][0] += float32(tab[binary.LittleEndian.Uint16(a1[2*i:])] * b[i])
		s[2][0] += float32(tab[binary.LittleEndian.Uint16(a2[2*i:])] * b[i])
		s[3][0] += float32(tab[binary.LittleEndian.Uint16(a3[2*i:])] * b[i])
	}
	return [4]float32{finish8(&s[0]), finish8(&s[1]), finish8(&s[2]), finish8(&s[3])}
}

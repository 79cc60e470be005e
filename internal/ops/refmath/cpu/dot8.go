package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
)

// Finish8 reduces eight running sums as dotF32 does.
func Finish8(s *[8]float32) float32 {
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// F32At is the little-endian float32 i of a.
func F32At(a []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:])) }

// Dot8F is dotF16Bytes (t F16) or dotF32Bytes (t F32) of eight weight
// rows, by this architecture's assembly (dot8Kernel: f16Dot8F16C and
// f32Dot8AVX on amd64, f16Dot8NEON and f32Dot8NEON on arm64): eight
// streams from memory and eight independent chains of adds.
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
		dot8Kernel(t, &p, unsafe.Pointer(&b[0]), n8, &s)
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

package cpu

import (
	"encoding/binary"
	"math"
)

// Finish8 reduces eight running sums as dotF32 does.
func Finish8(s *[8]float32) float32 {
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// F32At is the little-endian float32 i of a.
func F32At(a []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:])) }

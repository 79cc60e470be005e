package ops

import (
	"math"
	"sync"

	"github.com/ainekko/et/internal/ops/half"
)

// F32ToF16 converts a float32 to IEEE-754 binary16 bits the way ggml's
// software path does (see half.FromF32).
func F32ToF16(f float32) uint16 { return half.FromF32(f) }

// F16ToF32 widens IEEE-754 binary16 bits to float32 exactly (see
// half.ToF32).
func F16ToF32(h uint16) float32 { return half.ToF32(h) }

var (
	f16TableOnce sync.Once
	f16Table     *[1 << 16]float32
)

// F16ToF32Table returns the 65536-entry widening table, built on first use
// (never at package init).
func F16ToF32Table() *[1 << 16]float32 {
	f16TableOnce.Do(func() {
		t := new([1 << 16]float32)
		for i := range t {
			t[i] = F16ToF32(uint16(i))
		}
		f16Table = t
	})
	return f16Table
}

// RoundF16 rounds a float32 to the nearest f16 value and widens it back.
// Finite values that stay finite are rounded in float32 bits (no
// conversion, no branches on the data); infinities, NaN and overflow go
// through F32ToF16. TestRoundF16Fast checks it against
// F16ToF32(F32ToF16(f)).
func RoundF16(f float32) float32 {
	b := math.Float32bits(f)
	a := b & 0x7fffffff
	sign := b & 0x80000000
	if a >= 0x38800000 { // |f| >= 2^-14: normal halves
		if a >= 0x477ff000 { // rounds to 65536 or more (inf), or inf/NaN
			return F16ToF32(F32ToF16(f))
		}
		// Round the mantissa to 10 bits, to nearest even; a carry moves
		// into the exponent as it should.
		r := (a + 0xfff + (a>>13)&1) &^ 0x1fff
		return math.Float32frombits(r | sign)
	}
	// Subnormal halves are multiples of 2^-24, the ulp of [0.5, 1): adding
	// 0.75 rounds |f| to one (to nearest even), subtracting it is exact.
	r := float32(math.Float32frombits(a)+0.75) - 0.75
	return math.Float32frombits(math.Float32bits(r) | sign)
}

// RoundF16Slice applies RoundF16 to every element of x.
func RoundF16Slice(x []float32) {
	for i, f := range x {
		b := math.Float32bits(f)
		a := b & 0x7fffffff
		sign := b & 0x80000000
		switch {
		case a >= 0x477ff000:
			x[i] = F16ToF32(F32ToF16(f))
		case a >= 0x38800000:
			x[i] = math.Float32frombits((a+0xfff+(a>>13)&1)&^0x1fff | sign)
		default:
			r := float32(math.Float32frombits(a)+0.75) - 0.75
			x[i] = math.Float32frombits(math.Float32bits(r) | sign)
		}
	}
}

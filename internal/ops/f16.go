package ops

import (
	"math"
	"sync"
)

// F32ToF16 converts a float32 to IEEE-754 binary16 bits the way ggml's
// software path (ggml_compute_fp32_to_fp16) does: round to nearest even,
// overflow to ±inf (65520 becomes 0x7c00), correct subnormals, and any
// NaN becomes sign|0x7e00.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero): value = mant24 * 2^(exp-150), in units
		// of 2^-24 that is mant24 >> (14 - e).
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to and including inf
	}
	return sign | uint16(h)
}

// F16ToF32 widens IEEE-754 binary16 bits to float32 exactly (NaN payloads
// are kept).
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half: normalise.
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

var (
	f16TableOnce sync.Once
	f16Table     *[1 << 16]float32
)

// f16ToF32Table returns the 65536-entry widening table, built on first use
// (never at package init).
func f16ToF32Table() *[1 << 16]float32 {
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

// roundF16Slice applies RoundF16 to every element of x.
func roundF16Slice(x []float32) {
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

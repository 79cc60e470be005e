// Package half converts between float32 and IEEE-754 binary16 (f16) bits.
// It is a leaf, so that small packages (kernelargs) can encode f16 without
// linking the op catalog.
package half

import "math"

// FromF32 converts a float32 to IEEE-754 binary16 bits the way ggml's
// software path (ggml_compute_fp32_to_fp16) does: round to nearest even,
// overflow to ±inf (65520 becomes 0x7c00), correct subnormals, and any
// NaN becomes sign|0x7e00.
func FromF32(f float32) uint16 {
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

// ToF32 widens IEEE-754 binary16 bits to float32 exactly (NaN payloads
// are kept).
func ToF32(h uint16) float32 {
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

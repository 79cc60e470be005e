//go:build goexperiment.simd && amd64

package cpu

import (
	"simd/archsimd"
	"unsafe"
)

// The loops address memory through unsafe pointers: the kernels check
// the lengths of their slices once, on entry, and per-load slice
// expressions would otherwise cost more scalar instructions (bounds checks
// and pointer masking) than the vector work.

// LoadI8x32, LoadU8x16 and LoadF32x8 load a vector from p+off.
func LoadI8x32(p unsafe.Pointer, off int) archsimd.Int8x32 {
	return archsimd.LoadInt8x32((*[32]int8)(unsafe.Add(p, off)))
}

func LoadU8x16(p unsafe.Pointer, off int) archsimd.Uint8x16 {
	return archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p, off)))
}

func LoadF32x8(p unsafe.Pointer, off int) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, off)))
}

// WidenF16x8 converts the eight little-endian halves at p+off to float32
// exactly: sign-extending each half to 32 bits and shifting it left by 13
// puts its exponent and mantissa in place below four copies of its sign;
// keeping the sign bit (mask 0x8fffe000) and scaling by 2^112 rebiases
// the exponent, exactly for zeros, subnormals and normals; infinities and
// NaNs (exponent field 0x0f800000 after the shift) get the all-ones
// exponent ORed in. The constants are arguments because the compiler does
// not hoist them out of loops.
func WidenF16x8(p unsafe.Pointer, off int, keep, expo, inf archsimd.Int32x8, scale archsimd.Float32x8) archsimd.Float32x8 {
	h := LoadU8x16(p, off).AsInt16x8().ExtendToInt32().ShiftAllLeft(13)
	f := h.And(keep).AsFloat32x8().Mul(scale)
	return f.AsInt32x8().Or(h.And(expo).Equal(expo).ToInt32x8().And(inf)).AsFloat32x8()
}

// F16Consts are the constants WidenF16x8 takes, built once per call.
func F16Consts() (keep, expo, inf archsimd.Int32x8, scale archsimd.Float32x8) {
	return archsimd.BroadcastInt32x8(-0x70002000), archsimd.BroadcastInt32x8(0x0f800000),
		archsimd.BroadcastInt32x8(0x7f800000), archsimd.BroadcastFloat32x8(0x1p112)
}

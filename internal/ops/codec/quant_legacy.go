package codec

import (
	"encoding/binary"
	"math"

	"github.com/ainekko/et/internal/ops/half"
)

// Block sizes in bytes.
const (
	sizeQ4_1 = 20
	sizeQ5_0 = 22
	sizeQ5_1 = 24
	sizeQ2_K = 84
	sizeQ3_K = 110
	sizeQ5_K = 176
	SizeQ6_K = 210
)

// GroupMaxEps is ggml-quants.c's GROUP_MAX_EPS: a group whose largest
// magnitude is below it quantizes to zero.
const GroupMaxEps float32 = 1e-15

// F32ToBF16 is ggml_compute_fp32_to_bf16: round to nearest even, NaNs
// truncated and forced quiet.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

// BF16ToF32 widens a bf16 value exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// cvtI32 is the x86 float → int32 conversion C code compiles to
// (cvttss2si): truncation toward zero, and INT32_MIN for NaN and values
// out of range, where a C cast is undefined and Go's is
// implementation-defined. Narrower C casts then keep the low bits.
func cvtI32(f float32) int32 {
	if !(f > -2147483904 && f < 2147483648) { // also NaN
		return math.MinInt32
	}
	return int32(f)
}

// F16At is the f16 value at b[off:] as float32.
func F16At(b []byte, off int) float32 { return half.ToF32(binary.LittleEndian.Uint16(b[off:])) }

// QuantizeBlockQ4_1 is ggml's quantize_row_q4_1_ref for one q4_1 block.
func QuantizeBlockQ4_1(x []float32, y []byte) {
	x = x[:32]
	y = y[:sizeQ4_1]
	mn, mx := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	d := (mx - mn) / 15
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y[0:], half.FromF32(d))
	binary.LittleEndian.PutUint16(y[2:], half.FromF32(mn))
	for j := 0; j < 16; j++ {
		x0 := float32((x[j] - mn) * id)
		x1 := float32((x[16+j] - mn) * id)
		xi0 := uint8(min(15, int8(cvtI32(x0+0.5))))
		xi1 := uint8(min(15, int8(cvtI32(x1+0.5))))
		y[4+j] = xi0 | xi1<<4
	}
}

// DequantizeBlockQ4_1 is ggml's dequantize_row_q4_1 for one q4_1 block.
func DequantizeBlockQ4_1(x []byte, y []float32) {
	x = x[:sizeQ4_1]
	y = y[:32]
	d, m := F16At(x, 0), F16At(x, 2)
	for j := 0; j < 16; j++ {
		y[j] = float32(float32(x[4+j]&0x0f)*d) + m
		y[j+16] = float32(float32(x[4+j]>>4)*d) + m
	}
}

// QuantizeBlockQ5_0 is ggml's quantize_row_q5_0_ref for one q5_0 block.
func QuantizeBlockQ5_0(x []float32, y []byte) {
	x = x[:32]
	y = y[:sizeQ5_0]
	var amax, max float32
	for _, v := range x {
		if a := Abs32(v); amax < a {
			amax = a
			max = v
		}
	}
	d := max / -16
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y[0:], half.FromF32(d))
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := float32(x[j] * id)
		x1 := float32(x[16+j] * id)
		xi0 := uint8(min(31, int8(cvtI32(x0+16.5))))
		xi1 := uint8(min(31, int8(cvtI32(x1+16.5))))
		y[6+j] = xi0&0x0f | (xi1&0x0f)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	binary.LittleEndian.PutUint32(y[2:], qh)
}

// DequantizeBlockQ5_0 is ggml's dequantize_row_q5_0 for one q5_0 block.
func DequantizeBlockQ5_0(x []byte, y []float32) {
	x = x[:sizeQ5_0]
	y = y[:32]
	d := F16At(x, 0)
	qh := binary.LittleEndian.Uint32(x[2:])
	for j := 0; j < 16; j++ {
		xh0 := uint8(qh>>j<<4) & 0x10
		xh1 := uint8(qh>>(j+12)) & 0x10
		x0 := int32(x[6+j]&0x0f|xh0) - 16
		x1 := int32(x[6+j]>>4|xh1) - 16
		y[j] = float32(x0) * d
		y[j+16] = float32(x1) * d
	}
}

// QuantizeBlockQ5_1 is ggml's quantize_row_q5_1_ref for one q5_1 block.
func QuantizeBlockQ5_1(x []float32, y []byte) {
	x = x[:32]
	y = y[:sizeQ5_1]
	mn, mx := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	d := (mx - mn) / 31
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y[0:], half.FromF32(d))
	binary.LittleEndian.PutUint16(y[2:], half.FromF32(mn))
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := float32((x[j] - mn) * id)
		x1 := float32((x[16+j] - mn) * id)
		xi0 := uint8(cvtI32(x0 + 0.5))
		xi1 := uint8(cvtI32(x1 + 0.5))
		y[8+j] = xi0&0x0f | (xi1&0x0f)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	binary.LittleEndian.PutUint32(y[4:], qh)
}

// DequantizeBlockQ5_1 is ggml's dequantize_row_q5_1 for one q5_1 block.
func DequantizeBlockQ5_1(x []byte, y []float32) {
	x = x[:sizeQ5_1]
	y = y[:32]
	d, m := F16At(x, 0), F16At(x, 2)
	qh := binary.LittleEndian.Uint32(x[4:])
	for j := 0; j < 16; j++ {
		xh0 := uint8(qh>>j<<4) & 0x10
		xh1 := uint8(qh>>(j+12)) & 0x10
		x0 := int32(x[8+j]&0x0f | xh0)
		x1 := int32(x[8+j]>>4 | xh1)
		y[j] = float32(float32(x0)*d) + m
		y[j+16] = float32(float32(x1)*d) + m
	}
}

package codec

import (
	"encoding/binary"
	"math"

	"github.com/ainekko/et/internal/ops/half"
)

// The codecs of ggml's newer low-bit formats: q1_0 and q2_0 (sign / 2-bit
// with one f16 scale), the ternary tq1_0 and tq2_0 (BitNet b1.58), and the
// 4-bit floating-point mxfp4 (gpt-oss) and nvfp4, bit-exact with ggml's
// quantize_row_*_ref and dequantize_row_* (ggml-quants.c, d99724f2) like
// quant_legacy.go.

const (
	sizeQ1_0  = 18
	sizeQ2_0  = 18
	sizeTQ1_0 = 54
	sizeTQ2_0 = 66
	sizeMXFP4 = 17
	sizeNVFP4 = 36
)

// q1_0: d = mean |x|, one sign bit per value (1 for x ≥ 0).
func QuantizeBlockQ1_0(x []float32, y []byte) {
	x = x[:128]
	y = y[:sizeQ1_0]
	var sumAbs float32
	for _, v := range x {
		sumAbs += Abs32(v)
	}
	binary.LittleEndian.PutUint16(y, half.FromF32(sumAbs/128))
	qs := y[2:]
	clear(qs)
	for j, v := range x {
		if v >= 0 {
			qs[j/8] |= 1 << (j % 8)
		}
	}
}

// DequantizeBlockQ1_0 is ggml's dequantize_row_q1_0 for one q1_0 block.
func DequantizeBlockQ1_0(x []byte, y []float32) {
	x = x[:sizeQ1_0]
	y = y[:128]
	d := F16At(x, 0)
	for j := range y {
		if (x[2+j/8]>>(j%8))&1 != 0 {
			y[j] = d
		} else {
			y[j] = -d
		}
	}
}

// q2_0: d = max |x|, q = clamp(roundf(x/d) + 1, 0, 3), value (q - 1)·d.
func QuantizeBlockQ2_0(x []float32, y []byte) {
	x = x[:64]
	y = y[:sizeQ2_0]
	var amax float32
	for _, v := range x {
		if a := Abs32(v); a > amax {
			amax = a
		}
	}
	var id float32
	if amax > 0 {
		id = 1 / amax
	}
	binary.LittleEndian.PutUint16(y, half.FromF32(amax))
	qs := y[2:]
	clear(qs)
	for j, w := range x {
		q := cvtI32(roundf(float32(w*id))) + 1
		q = max(0, min(3, q))
		qs[j/4] |= uint8(q) << ((j % 4) * 2)
	}
}

// DequantizeBlockQ2_0 is ggml's dequantize_row_q2_0 for one q2_0 block.
func DequantizeBlockQ2_0(x []byte, y []float32) {
	x = x[:sizeQ2_0]
	y = y[:64]
	d := F16At(x, 0)
	for j := range y {
		q := int32(x[2+j/4]>>((j%4)*2)) & 3
		y[j] = float32(q-1) * d
	}
}

// lroundf is C's lroundf for the values ternary quantization sees: round
// half away from zero to an integer (x86: out of range gives INT64_MIN,
// whose low bits are 0).
func lroundf(x float32) int64 {
	r := math.Round(float64(x))
	if !(r > -9.3e18 && r < 9.3e18) {
		return math.MinInt64
	}
	return int64(r)
}

// tq1_0: qs[48] (5 trits per byte), qh[4] (4 trits per byte), d = max |x|.
func QuantizeBlockTQ1_0(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:sizeTQ1_0]
	var amax float32
	for _, v := range x {
		if a := Abs32(v); !(amax > a) { // C's MAX(amax, a)
			amax = a
		}
	}
	var id float32
	if amax != 0 {
		id = 1 / amax
	}
	binary.LittleEndian.PutUint16(y[52:], half.FromF32(amax))
	qs, qh := y[0:48], y[48:52]
	trit := func(v float32) uint8 { return uint8(lroundf(float32(v*id)) + 1) }
	pack := func(q uint8) uint8 { return uint8((uint16(q)*256 + 242) / 243) } // ceiling division
	o := 0
	for j := 0; j < 32; j += 32 {
		for m := 0; m < 32; m++ {
			var q uint8
			for n := 0; n < 5; n++ {
				q = q*3 + trit(x[o+m+n*32])
			}
			qs[j+m] = pack(q)
		}
		o += 5 * 32
	}
	for j := 32; j < 48; j += 16 {
		for m := 0; m < 16; m++ {
			var q uint8
			for n := 0; n < 5; n++ {
				q = q*3 + trit(x[o+m+n*16])
			}
			qs[j+m] = pack(q)
		}
		o += 5 * 16
	}
	for j := 0; j < 4; j++ {
		var q uint8
		for m := 0; m < 4; m++ {
			q = q*3 + trit(x[o+j+m*4])
		}
		qh[j] = pack(q * 3)
	}
}

// DequantizeBlockTQ1_0 is ggml's dequantize_row_tq1_0 for one tq1_0 block.
func DequantizeBlockTQ1_0(x []byte, y []float32) {
	x = x[:sizeTQ1_0]
	y = y[:QKK]
	pow3 := [6]uint8{1, 3, 9, 27, 81, 243}
	d := F16At(x, 52)
	qs, qh := x[0:48], x[48:52]
	o := 0
	val := func(b uint8, n int) float32 {
		q := b * pow3[n]
		xi := int16((uint16(q) * 3) >> 8)
		return float32(xi-1) * d
	}
	for n := 0; n < 5; n++ {
		for m := 0; m < 32; m++ {
			y[o] = val(qs[m], n)
			o++
		}
	}
	for n := 0; n < 5; n++ {
		for m := 0; m < 16; m++ {
			y[o] = val(qs[32+m], n)
			o++
		}
	}
	for n := 0; n < 4; n++ {
		for j := 0; j < 4; j++ {
			y[o] = val(qh[j], n)
			o++
		}
	}
}

// tq2_0: qs[64] (4 2-bit trits per byte), d = max |x|.
func QuantizeBlockTQ2_0(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:sizeTQ2_0]
	var amax float32
	for _, v := range x {
		if a := Abs32(v); !(amax > a) { // C's MAX(amax, a)
			amax = a
		}
	}
	var id float32
	if amax != 0 {
		id = 1 / amax
	}
	binary.LittleEndian.PutUint16(y[64:], half.FromF32(amax))
	for j := 0; j < 64; j += 32 {
		for m := 0; m < 32; m++ {
			var q uint8
			for n := 0; n < 4; n++ {
				xi := lroundf(float32(x[4*j+m+n*32]*id)) + 1
				q += uint8(xi&3) << (2 * n)
			}
			y[j+m] = q
		}
	}
}

// DequantizeBlockTQ2_0 is ggml's dequantize_row_tq2_0 for one tq2_0 block.
func DequantizeBlockTQ2_0(x []byte, y []float32) {
	x = x[:sizeTQ2_0]
	y = y[:QKK]
	d := F16At(x, 64)
	o := 0
	for j := 0; j < 64; j += 32 {
		for l := 0; l < 4; l++ {
			for m := 0; m < 32; m++ {
				q := int32(x[j+m]>>(l*2)) & 3
				y[o] = float32(q-1) * d
				o++
			}
		}
	}
}

// kvaluesFP4 is ggml's kvalues_fp4: the e2m1 values, doubled.
var kvaluesFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// bestIndexFP4 is ggml's best_index_mxfp4: the code whose value·e is
// nearest x (the first of equals).
func bestIndexFP4(x, e float32) uint8 {
	best := 0
	bestErr := Abs32(float32(float32(kvaluesFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		if err := Abs32(float32(float32(kvaluesFP4[i])*e) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

// e8m0Half is ggml_e8m0_to_fp32_half: 2^(x-128).
func e8m0Half(x uint8) float32 {
	if x < 2 {
		return math.Float32frombits(0x00200000 << x)
	}
	return math.Float32frombits(uint32(x-1) << 23)
}

// mxfp4: e (E8M0 shared exponent), qs[16] e2m1 codes.
func QuantizeBlockMXFP4(x []float32, y []byte) {
	x = x[:32]
	y = y[:sizeMXFP4]
	var amax float32
	for _, v := range x {
		if a := Abs32(v); amax < a {
			amax = a
		}
	}
	var e uint8
	if amax > 0 {
		lg := float32(math.Log2(float64(amax))) // log2f, correctly rounded
		e = uint8(cvtI32(float32(float32(math.Floor(float64(lg)))-2) + 127))
	}
	d := e8m0Half(e)
	y[0] = e
	for j := 0; j < 16; j++ {
		y[1+j] = bestIndexFP4(x[j], d) | bestIndexFP4(x[16+j], d)<<4
	}
}

// DequantizeBlockMXFP4 is ggml's dequantize_row_mxfp4 for one mxfp4 block.
func DequantizeBlockMXFP4(x []byte, y []float32) {
	x = x[:sizeMXFP4]
	y = y[:32]
	d := e8m0Half(x[0])
	for j := 0; j < 16; j++ {
		y[j] = float32(kvaluesFP4[x[1+j]&0xf]) * d
		y[j+16] = float32(kvaluesFP4[x[1+j]>>4]) * d
	}
}

// ue4m3ToF32 is ggml_ue4m3_to_fp32: an unsigned e4m3 value, halved.
func ue4m3ToF32(x uint8) float32 {
	if x == 0 || x == 0x7f {
		return 0
	}
	exp := int(x>>3) & 0xf
	man := int(x & 7)
	var raw float32
	if exp == 0 {
		raw = float32(math.Ldexp(float64(man), -9))
	} else {
		raw = float32(math.Ldexp(float64(1+float32(man)/8), exp-7))
	}
	return raw * 0.5
}

// f32ToUE4M3 is ggml_fp32_to_ue4m3: round the mantissa half up, clamp to
// 448 (0x7e); non-positive values and NaN give 0.
func f32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	if x > 448 {
		x = 448
	}
	bits := math.Float32bits(x)
	fexp := int(bits>>23&0xff) - 127
	fman := int(bits >> 20 & 7)
	uexp := fexp + 7
	if uexp <= 0 {
		man := cvtI32(float32(x*512) + 0.5)
		if man > 7 {
			man = 7
		}
		if man < 1 {
			return 0
		}
		return uint8(man)
	}
	if uexp >= 15 {
		return 0x7e
	}
	uman := fman + int(bits>>19&1)
	if uman > 7 {
		uman = 0
		uexp++
		if uexp >= 15 {
			return 0x7e
		}
	}
	return uint8(uexp<<3 | uman)
}

// nvfp4: d[4] (a UE4M3 scale per 16 values), qs[32] e2m1 codes.
func QuantizeBlockNVFP4(x []float32, y []byte) {
	x = x[:64]
	y = y[:sizeNVFP4]
	for s := 0; s < 4; s++ {
		xb := x[16*s : 16*s+16]
		var amax float32
		for _, v := range xb {
			if a := Abs32(v); amax < a {
				amax = a
			}
		}
		ue := f32ToUE4M3(amax / 6)
		y[s] = ue
		d := ue4m3ToF32(ue)
		for j := 0; j < 8; j++ {
			y[4+8*s+j] = bestIndexFP4(xb[j], d) | bestIndexFP4(xb[8+j], d)<<4
		}
	}
}

// DequantizeBlockNVFP4 is ggml's dequantize_row_nvfp4 for one nvfp4 block.
func DequantizeBlockNVFP4(x []byte, y []float32) {
	x = x[:sizeNVFP4]
	y = y[:64]
	for s := 0; s < 4; s++ {
		d := ue4m3ToF32(x[s])
		yb := y[16*s : 16*s+16]
		for j := 0; j < 8; j++ {
			q := x[4+8*s+j]
			yb[j] = float32(kvaluesFP4[q&0xf]) * d
			yb[j+8] = float32(kvaluesFP4[q>>4]) * d
		}
	}
}

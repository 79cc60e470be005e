package codec

import (
	"encoding/binary"

	"github.com/ainekko/et/internal/ops/half"
)

// The non-linear 4-bit codecs iq4_nl and iq4_xs (ggml-quants.c's
// quantize_row_iq4_nl_impl, as quantize_row_iq4_nl_ref and
// quantize_row_iq4_xs_ref call it, and dequantize_row_iq4_*), bit-exact
// with ggml like quant_legacy.go. One quirk is not copied: for an iq4_nl
// block whose values are all below GROUP_MAX_EPS in magnitude, ggml leaves
// the quants uninitialised (stack contents); et writes zeros. The scale is
// 0 either way, so every value dequantizes to ±0.

const (
	SizeIQ4_NL = 18
	SizeIQ4_XS = 136
)

// kvaluesIQ4NL is ggml's kvalues_iq4nl.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// bestIndexInt8 is ggml's best_index_int8 over kvaluesIQ4NL: the index of
// the value nearest x (ties to the upper one), by bisection.
func bestIndexInt8(x float32) uint8 {
	val := &kvaluesIQ4NL
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// QuantizeIQ4 is quantize_row_iq4_nl_impl without importance weights for
// one super-block x of 32 (iq4_nl: y = d, qs[16]) or 256 values (iq4_xs:
// y = d, scales_h, scales_l[4], qs[128]), with ggml's ntry (-1 for
// iq4_nl's reference quantizer, 7 for iq4_xs').
func QuantizeIQ4(x []float32, y []byte, ntry int) {
	sb := len(x)
	nb := sb / 32
	values := &kvaluesIQ4NL
	v0 := float32(values[0])
	var (
		L        [QKK]uint8
		weight   [32]float32
		scales   [8]float32
		maxScale float32
		amaxSc   float32
	)
	q4 := y[len(y)-sb/2:]
	clear(q4)
	binary.LittleEndian.PutUint16(y, half.FromF32(0))
	for ib := 0; ib < nb; ib++ {
		xb := x[32*ib : 32*ib+32]
		Lb := L[32*ib : 32*ib+32]
		for j, v := range xb {
			weight[j] = float32(v * v)
		}
		var amax, max float32
		for _, v := range xb {
			if ax := Abs32(v); ax > amax {
				amax, max = ax, v
			}
		}
		if amax < GroupMaxEps {
			scales[ib] = 0
			continue
		}
		var d float32
		if ntry > 0 {
			d = -max / v0
		} else {
			d = max / v0
		}
		id := 1 / d
		var sumqx, sumq2 float32
		for j, v := range xb {
			l := bestIndexInt8(float32(id * v))
			Lb[j] = l
			q := float32(values[l])
			wq := float32(weight[j] * q)
			sumqx += float32(wq * v)
			sumq2 += float32(wq * q)
		}
		d = 0
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		best := float32(d * sumqx)
		for itry := -ntry; itry <= ntry; itry++ {
			id = float32(itry+int(values[0])) / max
			sumqx, sumq2 = 0, 0
			for j, v := range xb {
				q := float32(values[bestIndexInt8(float32(id*v))])
				wq := float32(weight[j] * q)
				sumqx += float32(wq * v)
				sumq2 += float32(wq * q)
			}
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				d = sumqx / sumq2
				best = float32(d * sumqx)
			}
		}
		scales[ib] = d
		if ad := Abs32(d); ad > amaxSc {
			amaxSc, maxScale = ad, d
		}
	}
	if nb > 1 {
		var scalesH uint16
		scalesL := y[4:8]
		d := -maxScale / 32
		binary.LittleEndian.PutUint16(y, half.FromF32(d))
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for ib := 0; ib < nb; ib++ {
			l := max(-32, min(31, NearestInt(float32(id*scales[ib]))))
			dl := float32(d * float32(l))
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			for j, v := range x[32*ib : 32*ib+32] {
				L[32*ib+j] = bestIndexInt8(float32(idl * v))
			}
			l += 32
			ll, lh := uint8(l&0xf), uint8(l>>4)
			if ib%2 == 0 {
				scalesL[ib/2] = ll
			} else {
				scalesL[ib/2] |= ll << 4
			}
			scalesH |= uint16(lh) << (2 * (ib % 8))
		}
		binary.LittleEndian.PutUint16(y[2:], scalesH)
	} else {
		binary.LittleEndian.PutUint16(y, half.FromF32(scales[0]))
		if ntry > 0 {
			var id float32
			if scales[0] != 0 {
				id = 1 / scales[0]
			}
			for j, v := range x {
				L[j] = bestIndexInt8(float32(id * v))
			}
		}
	}
	for i := 0; i < sb/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// DequantizeBlockIQ4_NL is ggml's dequantize_row_iq4_nl for one iq4_nl
// block.
func DequantizeBlockIQ4_NL(x []byte, y []float32) {
	x = x[:SizeIQ4_NL]
	y = y[:32]
	d := F16At(x, 0)
	for j := 0; j < 16; j++ {
		y[j] = d * float32(kvaluesIQ4NL[x[2+j]&0xf])
		y[j+16] = d * float32(kvaluesIQ4NL[x[2+j]>>4])
	}
}

// DequantizeBlockIQ4_XS is ggml's dequantize_row_iq4_xs for one iq4_xs
// block.
func DequantizeBlockIQ4_XS(x []byte, y []float32) {
	x = x[:SizeIQ4_XS]
	y = y[:QKK]
	d := F16At(x, 0)
	scalesH := binary.LittleEndian.Uint16(x[2:])
	scalesL := x[4:8]
	qs := x[8:]
	for ib := 0; ib < 8; ib++ {
		ls := int32(scalesL[ib/2]>>(4*(ib%2)))&0xf | int32((scalesH>>(2*ib))&3)<<4
		dl := float32(d * float32(ls-32))
		for j := 0; j < 16; j++ {
			y[32*ib+j] = float32(dl * float32(kvaluesIQ4NL[qs[16*ib+j]&0xf]))
			y[32*ib+j+16] = float32(dl * float32(kvaluesIQ4NL[qs[16*ib+j]>>4]))
		}
	}
}

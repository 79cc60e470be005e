package codec

import (
	"encoding/binary"
	"math"

	"github.com/ainekko/et/internal/ops/half"
)

// The k-quant codecs q2_K, q3_K, q5_K and q6_K (quant_legacy.go says how
// they are kept bit-exact with ggml's reference quantizers).

// packQ2 stores 256 2-bit values L as ggml's q2_K/q3_K qs (64 bytes).
func packQ2(L []uint8, qs []byte) {
	for j := 0; j < QKK; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// q2_K: scales[16] (4-bit scale | 4-bit min << 4), qs[64], d, dmin.
func QuantizeBlockQ2_K(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:sizeQ2_K]
	var (
		L        [QKK]uint8
		laux     [16]uint8
		weights  [16]float32
		mins     [16]float32
		scales   [16]float32
		maxScale float32
		maxMin   float32
	)
	const q4scale = 15
	for j := 0; j < 16; j++ {
		for l := 0; l < 16; l++ {
			weights[l] = Abs32(x[16*j+l])
		}
		scales[j], mins[j] = makeQKX2Quants(3, x[16*j:16*j+16], weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	sc := y[0:16]
	if maxScale > 0 {
		iscale := q4scale / maxScale
		for j := 0; j < 16; j++ {
			sc[j] = uint8(NearestInt(float32(iscale * scales[j])))
		}
		binary.LittleEndian.PutUint16(y[80:], half.FromF32(maxScale/q4scale))
	} else {
		clear(sc)
		binary.LittleEndian.PutUint16(y[80:], half.FromF32(0))
	}
	if maxMin > 0 {
		iscale := q4scale / maxMin
		for j := 0; j < 16; j++ {
			sc[j] |= uint8(NearestInt(float32(iscale*mins[j])) << 4)
		}
		binary.LittleEndian.PutUint16(y[82:], half.FromF32(maxMin/q4scale))
	} else {
		binary.LittleEndian.PutUint16(y[82:], half.FromF32(0))
	}
	fd, fm := F16At(y, 80), F16At(y, 82)
	for j := 0; j < 16; j++ {
		d := float32(fd * float32(sc[j]&0xf))
		if d == 0 {
			continue
		}
		dm := float32(fm * float32(sc[j]>>4))
		for i := 0; i < 16; i++ {
			l := NearestInt(float32(x[16*j+i]+dm) / d)
			L[16*j+i] = uint8(max(0, min(3, l)))
		}
	}
	packQ2(L[:], y[16:80])
}

// DequantizeBlockQ2_K is ggml's dequantize_row_q2_K for one q2_K block.
func DequantizeBlockQ2_K(x []byte, y []float32) {
	x = x[:sizeQ2_K]
	y = y[:QKK]
	d, mn := F16At(x, 80), F16At(x, 82)
	scales := x[0:16]
	q := x[16:80]
	is, o := 0, 0
	for n := 0; n < QKK; n += 128 {
		shift := 0
		for j := 0; j < 4; j++ {
			for h := 0; h < 2; h++ {
				sc := scales[is]
				is++
				dl, ml := float32(d*float32(sc&0xf)), float32(mn*float32(sc>>4))
				for l := 0; l < 16; l++ {
					y[o] = float32(dl*float32((q[16*h+l]>>shift)&3)) - ml
					o++
				}
			}
			shift += 2
		}
		q = q[32:]
	}
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse = true: L gets
// values in [0, 2·nmax).
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	var max, amax float32
	for i := 0; i < n; i++ {
		if ax := Abs32(x[i]); ax > amax {
			amax = ax
			max = x[i]
		}
	}
	if amax < GroupMaxEps {
		clear(L[:n])
		return 0
	}
	iscale := float32(-nmax) / max
	var sumlx, suml2 float32
	for i := 0; i < n; i++ {
		l := max32(-nmax, min(nmax-1, NearestInt(float32(iscale*x[i]))))
		L[i] = int8(l)
		w := float32(x[i] * x[i])
		fl := float32(l)
		sumlx += float32(float32(w*x[i]) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	for itry := 0; itry < 5; itry++ {
		nChanged := 0
		for i := 0; i < n; i++ {
			w := float32(x[i] * x[i])
			li := float32(L[i])
			slx := sumlx - float32(float32(w*x[i])*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				newL := NearestInt(float32(x[i]*sl2) / slx)
				newL = max32(-nmax, min(nmax-1, newL))
				if newL != int32(L[i]) {
					fn := float32(newL)
					slx += float32(float32(w*x[i]) * fn)
					sl2 += float32(float32(w*fn) * fn)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(newL)
						sumlx = slx
						suml2 = sl2
						nChanged++
					}
				}
			}
		}
		if nChanged == 0 {
			break
		}
	}
	for i := 0; i < n; i++ {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

func max32(a, b int32) int32 { return max(a, b) }

// q3_K: hmask[32], qs[64], scales[12] (16 6-bit scales), d.
func QuantizeBlockQ3_K(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:sizeQ3_K]
	var (
		L        [QKK]int8
		scales   [16]float32
		maxScale float32
		amax     float32
	)
	for j := 0; j < 16; j++ {
		scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
		if s := Abs32(scales[j]); s > amax {
			amax = s
			maxScale = scales[j]
		}
	}
	sc := y[96:108]
	clear(sc)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := 0; j < 16; j++ {
			l := int8(NearestInt(float32(iscale * scales[j])))
			l = int8(max(-32, min(31, int32(l))) + 32)
			if j < 8 {
				sc[j] = uint8(l) & 0xf
			} else {
				sc[j-8] |= (uint8(l) & 0xf) << 4
			}
			l >>= 4
			sc[j%4+8] |= uint8(int32(l) << (2 * (j / 4)))
		}
		binary.LittleEndian.PutUint16(y[108:], half.FromF32(1/iscale))
	} else {
		binary.LittleEndian.PutUint16(y[108:], half.FromF32(0))
	}
	fd := F16At(y, 108)
	for j := 0; j < 16; j++ {
		var s int8
		if j < 8 {
			s = int8(sc[j] & 0xf)
		} else {
			s = int8(sc[j-8] >> 4)
		}
		s = int8((int32(s) | int32((sc[8+j%4]>>(2*(j/4)))&3)<<4) - 32)
		d := float32(fd * float32(s))
		if d == 0 {
			continue
		}
		for i := 0; i < 16; i++ {
			l := NearestInt(x[16*j+i] / d)
			L[16*j+i] = int8(max(-4, min(3, l)) + 4)
		}
	}
	hmask := y[0:32]
	clear(hmask)
	m, hm := 0, uint8(1)
	var L2 [QKK]uint8
	for j := 0; j < QKK; j++ {
		if L[j] > 3 {
			hmask[m] |= hm
			L[j] -= 4
		}
		L2[j] = uint8(L[j])
		if m++; m == 32 {
			m = 0
			hm <<= 1
		}
	}
	packQ2(L2[:], y[32:96])
}

// q3KScales unpacks the 16 6-bit scales of a q3_K block (as the kmask
// shuffle of dequantize_row_q3_K does).
func q3KScales(b []byte) [16]int8 {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	var aux [4]uint32
	aux[0] = binary.LittleEndian.Uint32(b[0:])
	aux[1] = binary.LittleEndian.Uint32(b[4:])
	tmp := binary.LittleEndian.Uint32(b[8:])
	aux[2] = (aux[0]>>4)&kmask2 | ((tmp>>4)&kmask1)<<4
	aux[3] = (aux[1]>>4)&kmask2 | ((tmp>>6)&kmask1)<<4
	aux[0] = aux[0]&kmask2 | ((tmp>>0)&kmask1)<<4
	aux[1] = aux[1]&kmask2 | ((tmp>>2)&kmask1)<<4
	var s [16]int8
	for i, a := range aux {
		for k := 0; k < 4; k++ {
			s[4*i+k] = int8(a >> (8 * k))
		}
	}
	return s
}

// DequantizeBlockQ3_K is ggml's dequantize_row_q3_K for one q3_K block.
func DequantizeBlockQ3_K(x []byte, y []float32) {
	x = x[:sizeQ3_K]
	y = y[:QKK]
	dAll := F16At(x, 108)
	hm := x[0:32]
	q := x[32:96]
	scales := q3KScales(x[96:108])
	m := uint8(1)
	is, o := 0, 0
	for n := 0; n < QKK; n += 128 {
		shift := 0
		for j := 0; j < 4; j++ {
			for h := 0; h < 2; h++ {
				dl := float32(dAll * float32(int32(scales[is])-32))
				is++
				for l := 16 * h; l < 16*h+16; l++ {
					v := int32((q[l] >> shift) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					y[o] = float32(dl * float32(v))
					o++
				}
			}
			shift += 2
			m <<= 1
		}
		q = q[32:]
	}
}

// q5_K: d, dmin, scales[12] (as q4_K), qh[32], qs[128].
func QuantizeBlockQ5_K(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:sizeQ5_K]
	var L [QKK]uint8
	kScalesMins(x, L[:], 31, -0.5, 15, y[0:16])
	fd, fm := F16At(y, 0), F16At(y, 2)
	sc := y[4:16]
	for j := 0; j < 8; j++ {
		s, m := ScaleMinK4(j, sc)
		d := float32(fd * float32(s))
		if d == 0 {
			continue
		}
		dm := float32(fm * float32(m))
		for i := 0; i < 32; i++ {
			l := NearestInt(float32(x[32*j+i]+dm) / d)
			L[32*j+i] = uint8(max(0, min(31, l)))
		}
	}
	qh := y[16:48]
	ql := y[48:176]
	clear(qh)
	m1, m2 := uint8(1), uint8(2)
	for n := 0; n < QKK; n += 64 {
		for j := 0; j < 32; j++ {
			l1 := L[n+j]
			if l1 > 15 {
				l1 -= 16
				qh[j] |= m1
			}
			l2 := L[n+j+32]
			if l2 > 15 {
				l2 -= 16
				qh[j] |= m2
			}
			ql[j] = l1 | l2<<4
		}
		m1 <<= 2
		m2 <<= 2
		ql = ql[32:]
	}
}

// packK4Scales stores d, dmin and the 12 packed 6-bit scales and mins of a
// q4_K / q5_K block (y[0:16]) from the sub-block scales and mins.
// kScalesMins is the scale and min search of q4_K and q5_K
// (quantize_row_q4_K_ref / q5_K_ref): per 32-value sub-block,
// make_qkx2_quants with weights av_x + |x|, levels 0..nmax, the search
// from rmin in nstep steps of 0.1; L gets the levels and sc the packed
// 6-bit scales and mins with d and dmin (y[0:16]).
func kScalesMins(x []float32, L []uint8, nmax int, rmin float32, nstep int, sc []byte) {
	var (
		laux     [32]uint8
		weights  [32]float32
		mins     [8]float32
		scales   [8]float32
		maxScale float32
		maxMin   float32
	)
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + Abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	packK4Scales(scales[:], mins[:], maxScale, maxMin, sc)
}

func packK4Scales(scales, mins []float32, maxScale, maxMin float32, y []byte) {
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := y[4:16]
	clear(sc)
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(NearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(NearestInt(float32(invMin*mins[j]))))
		if j < 4 {
			sc[j] = ls
			sc[j+4] = lm
		} else {
			sc[j+4] = ls&0xf | (lm&0xf)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	binary.LittleEndian.PutUint16(y[0:], half.FromF32(maxScale/63))
	binary.LittleEndian.PutUint16(y[2:], half.FromF32(maxMin/63))
}

// DequantizeBlockQ5_K is ggml's dequantize_row_q5_K for one q5_K block.
func DequantizeBlockQ5_K(x []byte, y []float32) {
	x = x[:sizeQ5_K]
	y = y[:QKK]
	d, mn := F16At(x, 0), F16At(x, 2)
	scales := x[4:16]
	qh := x[16:48]
	ql := x[48:176]
	u1, u2 := uint8(1), uint8(2)
	o := 0
	for is := 0; is < 8; is += 2 {
		sc, m := ScaleMinK4(is, scales)
		d1, m1 := float32(d*float32(sc)), float32(mn*float32(m))
		sc, m = ScaleMinK4(is+1, scales)
		d2, m2 := float32(d*float32(sc)), float32(mn*float32(m))
		for l := 0; l < 32; l++ {
			v := int32(ql[l] & 0xf)
			if qh[l]&u1 != 0 {
				v += 16
			}
			y[o+l] = float32(d1*float32(v)) - m1
		}
		for l := 0; l < 32; l++ {
			v := int32(ql[l] >> 4)
			if qh[l]&u2 != 0 {
				v += 16
			}
			y[o+32+l] = float32(d2*float32(v)) - m2
		}
		o += 64
		ql = ql[32:]
		u1 <<= 2
		u2 <<= 2
	}
}

// makeQXQuants is ggml's make_qx_quants with rmse_type = 1 and no
// importance weights: L gets values in [0, 2·nmax).
func makeQXQuants(nmax int32, x []float32, L []int8) float32 {
	n := len(x)
	var max, amax float32
	for i := 0; i < n; i++ {
		if ax := Abs32(x[i]); ax > amax {
			amax = ax
			max = x[i]
		}
	}
	if amax < GroupMaxEps {
		clear(L[:n])
		return 0
	}
	fnmax := float32(nmax)
	iscale := float32(-nmax) / max
	var sumlx, suml2 float32
	for i := 0; i < n; i++ {
		l := max32(-nmax, min(nmax-1, NearestInt(float32(iscale*x[i]))))
		L[i] = int8(l + nmax)
		w := float32(x[i] * x[i])
		fl := float32(l)
		sumlx += float32(float32(w*x[i]) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fnmax + float32(float32(0.1)*float32(is))) / max
		sumlx, suml2 = 0, 0
		for i := 0; i < n; i++ {
			l := max32(-nmax, min(nmax-1, NearestInt(float32(iscale*x[i]))))
			w := float32(x[i] * x[i])
			fl := float32(l)
			sumlx += float32(float32(w*x[i]) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i := 0; i < n; i++ {
				l := NearestInt(float32(iscale * x[i]))
				L[i] = int8(nmax + max32(-nmax, min(nmax-1, l)))
			}
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// q6_K: ql[128], qh[64], scales[16] (int8), d.
func QuantizeBlockQ6_K(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:SizeQ6_K]
	var (
		L           [QKK]int8
		scales      [16]float32
		maxScale    float32
		maxAbsScale float32
	)
	for ib := 0; ib < 16; ib++ {
		scale := makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
		scales[ib] = scale
		if a := Abs32(scale); a > maxAbsScale {
			maxAbsScale = a
			maxScale = scale
		}
	}
	if maxAbsScale < GroupMaxEps {
		clear(y)
		return
	}
	iscale := -128 / maxScale
	binary.LittleEndian.PutUint16(y[208:], half.FromF32(1/iscale))
	sc := y[192:208]
	for ib := 0; ib < 16; ib++ {
		sc[ib] = byte(int8(min(127, NearestInt(float32(iscale*scales[ib])))))
	}
	fd := F16At(y, 208)
	for j := 0; j < 16; j++ {
		d := float32(fd * float32(int8(sc[j])))
		if d == 0 {
			continue
		}
		for i := 0; i < 16; i++ {
			l := NearestInt(x[16*j+i] / d)
			L[16*j+i] = int8(max(-32, min(31, l)) + 32)
		}
	}
	ql := y[0:128]
	qh := y[128:192]
	for j := 0; j < QKK; j += 128 {
		for l := 0; l < 32; l++ {
			q1 := uint8(L[j+l]) & 0xf
			q2 := uint8(L[j+l+32]) & 0xf
			q3 := uint8(L[j+l+64]) & 0xf
			q4 := uint8(L[j+l+96]) & 0xf
			ql[l] = q1 | q3<<4
			ql[l+32] = q2 | q4<<4
			qh[l] = uint8(L[j+l]>>4) | uint8(L[j+l+32]>>4)<<2 | uint8(L[j+l+64]>>4)<<4 | uint8(L[j+l+96]>>4)<<6
		}
		ql = ql[64:]
		qh = qh[32:]
	}
}

// DequantizeBlockQ6_K is ggml's dequantize_row_q6_K for one q6_K block.
func DequantizeBlockQ6_K(x []byte, y []float32) {
	x = x[:SizeQ6_K]
	y = y[:QKK]
	d := F16At(x, 208)
	ql := x[0:128]
	qh := x[128:192]
	sc := x[192:208]
	for n := 0; n < QKK; n += 128 {
		out := y[n : n+128]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int8(ql[l]&0xf|((qh[l]>>0)&3)<<4) - 32
			q2 := int8(ql[l+32]&0xf|((qh[l]>>2)&3)<<4) - 32
			q3 := int8(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
			q4 := int8(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
			out[l] = float32(float32(d*float32(int8(sc[is]))) * float32(q1))
			out[l+32] = float32(float32(d*float32(int8(sc[is+2]))) * float32(q2))
			out[l+64] = float32(float32(d*float32(int8(sc[is+4]))) * float32(q3))
			out[l+96] = float32(float32(d*float32(int8(sc[is+6]))) * float32(q4))
		}
		ql = ql[64:]
		qh = qh[32:]
		sc = sc[8:]
	}
}

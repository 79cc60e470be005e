package codec

import (
	"encoding/binary"
	"math"

	"github.com/ainekko/et/internal/ops/half"
)

// This file holds ggml's block formats and reference quantizers, bit-exact
// with ggml's quantize_row_*_ref (reference/ggml-et-backend.md §8.2). All
// arithmetic is float32; every intermediate product is wrapped in an
// explicit float32 conversion so that no platform fuses it into an FMA.

// QK8_0, QK4_0 and QKK are the block sizes of q8_0, q4_0 and the k-quants.
const (
	QK8_0 = 32
	QK4_0 = 32
	QKK   = 256
)

// quantLanes is the lanes of this CPU's q8_0 and q4_0 quantizer kernels
// (quantKernels), chosen once; QuantizeQ8_0 and QuantizeQ4_0 run them.
var quantLanes = quantKernels()[0]

// QuantizeQ8_0 quantizes a row of q8_0 blocks (len(src) a multiple of
// 32): quantize_row_q8_0_ref's bytes, by this CPU's vector kernel where
// it has one.
func QuantizeQ8_0(src []float32, dst []byte) { quantizeQ8_0(quantLanes, src, dst) }

// QuantizeQ4_0 is QuantizeQ8_0 for q4_0.
func QuantizeQ4_0(src []float32, dst []byte) { quantizeQ4_0(quantLanes, src, dst) }

// quantizeQ8_0 is QuantizeQ8_0 by the kernel of lanes (quantKernels).
func quantizeQ8_0(lanes int, src []float32, dst []byte) {
	if quantQ8_0Vec(lanes, src, dst) {
		return
	}
	for b := 0; b < len(src)/QK8_0; b++ {
		QuantizeBlockQ8_0(src[b*QK8_0:(b+1)*QK8_0], dst[b*34:(b+1)*34])
	}
}

// quantizeQ4_0 is QuantizeQ4_0 by the kernel of lanes (quantKernels).
func quantizeQ4_0(lanes int, src []float32, dst []byte) {
	if quantQ4_0Vec(lanes, src, dst) {
		return
	}
	for b := 0; b < len(src)/QK4_0; b++ {
		quantizeBlockQ4_0(src[b*QK4_0:(b+1)*QK4_0], dst[b*18:(b+1)*18])
	}
}

// roundf is C's roundf: halves away from zero.
func roundf(x float32) float32 { return float32(math.Round(float64(x))) }

// NearestInt is ggml's nearest_int: the magic-number trick, which rounds
// half to even for |f| < 2^22.
func NearestInt(f float32) int32 {
	v := float32(f + 12582912)
	return int32(math.Float32bits(v)&0x7fffff) - 0x400000
}

// Abs32 is |x| (the sign bit cleared).
func Abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// QuantizeBlockQ8_0 is ggml's quantize_row_q8_0_ref for one q8_0 block.
func QuantizeBlockQ8_0(x []float32, y []byte) {
	x = x[:QK8_0]
	y = y[:34]
	var amax float32
	for _, v := range x {
		if a := Abs32(v); a > amax {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, half.FromF32(d))
	for j, v := range x {
		y[2+j] = byte(int8(roundf(float32(v * id))))
	}
}

// DequantizeBlockQ8_0 is ggml's dequantize_row_q8_0 for one q8_0 block.
func DequantizeBlockQ8_0(x []byte, y []float32) {
	x = x[:34]
	y = y[:QK8_0]
	d := half.ToF32(binary.LittleEndian.Uint16(x))
	for j := range y {
		y[j] = float32(int8(x[2+j])) * d
	}
}

func quantizeBlockQ4_0(x []float32, y []byte) {
	x = x[:QK4_0]
	y = y[:18]
	var amax, max float32
	for _, v := range x {
		if a := Abs32(v); amax < a {
			amax = a
			max = v
		}
	}
	d := max / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, half.FromF32(d))
	for j := 0; j < QK4_0/2; j++ {
		x0 := float32(x[j] * id)
		x1 := float32(x[QK4_0/2+j] * id)
		q0 := min(15, int8(float32(x0+8.5)))
		q1 := min(15, int8(float32(x1+8.5)))
		y[2+j] = byte(q0) | byte(q1)<<4
	}
}

// DequantizeBlockQ4_0 is ggml's dequantize_row_q4_0 for one q4_0 block.
func DequantizeBlockQ4_0(x []byte, y []float32) {
	x = x[:18]
	y = y[:QK4_0]
	d := half.ToF32(binary.LittleEndian.Uint16(x))
	for j := 0; j < QK4_0/2; j++ {
		y[j] = float32(int32(x[2+j]&0x0f)-8) * d
		y[j+QK4_0/2] = float32(int32(x[2+j]>>4)-8) * d
	}
}

// ScaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min of
// sub-block j from the 12 packed bytes q.
func ScaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// DequantizeBlockQ4_K is ggml's dequantize_row_q4_K for one q4_K block.
func DequantizeBlockQ4_K(x []byte, y []float32) {
	x = x[:144]
	y = y[:QKK]
	d := half.ToF32(binary.LittleEndian.Uint16(x[0:]))
	dmin := half.ToF32(binary.LittleEndian.Uint16(x[2:]))
	scales := x[4:16]
	qs := x[16:]
	for c := 0; c < 4; c++ {
		sc1, m1 := ScaleMinK4(2*c, scales)
		sc2, m2 := ScaleMinK4(2*c+1, scales)
		d1, mm1 := float32(d*float32(sc1)), float32(dmin*float32(m1))
		d2, mm2 := float32(d*float32(sc2)), float32(dmin*float32(m2))
		q := qs[32*c : 32*c+32]
		out := y[64*c : 64*c+64]
		for l := 0; l < 32; l++ {
			out[l] = float32(d1*float32(q[l]&0xf)) - mm1
			out[32+l] = float32(d2*float32(q[l]>>4)) - mm2
		}
	}
}

// QuantizeBlockQ4_K is ggml's quantize_row_q4_K_ref for one q4_K block.
func QuantizeBlockQ4_K(x []float32, y []byte) {
	x = x[:QKK]
	y = y[:144]
	var L [QKK]uint8
	kScalesMins(x, L[:], 15, -1, 20, y[0:16])
	sc := y[4:16]
	fd, fm := F16At(y, 0), F16At(y, 2)
	for j := 0; j < 8; j++ {
		s, m := ScaleMinK4(j, sc)
		d := float32(fd * float32(s))
		if d == 0 {
			continue
		}
		dm := float32(fm * float32(m))
		for i := 0; i < 32; i++ {
			l := NearestInt(float32(x[32*j+i]+dm) / d)
			L[32*j+i] = uint8(max(0, min(15, l)))
		}
	}
	qs := y[16:]
	for c := 0; c < 4; c++ {
		for l := 0; l < 32; l++ {
			qs[32*c+l] = L[64*c+l] | L[64*c+32+l]<<4
		}
	}
}

// makeQKX2Quants is ggml's make_qkx2_quants: a weighted search for the
// scale and min of one sub-block, minimising the weighted squared error
// (or, with useMad, the weighted absolute error). It fills L and returns
// the scale and the (positive) min.
func makeQKX2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	mn, mx := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < mn {
			mn = x[i]
		}
		if x[i] > mx {
			mx = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		for i := range n {
			L[i] = 0
		}
		return 0, -mn
	}
	fnmax := float32(nmax)
	iscale := fnmax / (mx - mn)
	scale = 1 / iscale
	var bestError float32
	for i := 0; i < n; i++ {
		l := NearestInt(float32(iscale * float32(x[i]-mn)))
		L[i] = uint8(max(0, min(int32(nmax), l)))
		diff := float32(float32(scale*float32(L[i]))+mn) - x[i]
		if useMad {
			diff = Abs32(diff)
		} else {
			diff = float32(diff * diff)
		}
		bestError += float32(weights[i] * diff)
	}
	if nstep < 1 {
		return scale, -mn
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fnmax) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			l := NearestInt(float32(iscale * float32(x[i]-mn)))
			l = max(0, min(int32(nmax), l))
			laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			wl := float32(w * fl)
			sumL += wl
			sumL2 += float32(wl * fl)
			sumXL += float32(wl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var errSum float32
			for i := 0; i < n; i++ {
				diff := float32(float32(thisScale*float32(laux[i]))+thisMin) - x[i]
				if useMad {
					diff = Abs32(diff)
				} else {
					diff = float32(diff * diff)
				}
				errSum += float32(weights[i] * diff)
			}
			if errSum < bestError {
				copy(L[:n], laux[:n])
				bestError = errSum
				scale = thisScale
				mn = thisMin
			}
		}
	}
	return scale, -mn
}

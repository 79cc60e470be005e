package ops

import (
	"encoding/binary"
	"math"
)

// ggml's CPU backend computes MUL_MAT of f32 and f16 weights by
// llamafile's tinyBLAS (ggml-cpu/llamafile/sgemm.cpp) when src1 has at
// least two columns, k is a multiple of 16 and m of 4 (and, for f32, src1
// is contiguous); f16 weights take src1 rounded to f16. In its AVX-512
// build each (row, column) dot product is one 16-lane vector: lane j sums
// the products of the elements i ≡ j (mod 16) in order by a fused
// multiply-add, and the lanes are reduced by _mm512_reduce_add_ps. The
// functions here are that order in portable Go, the scalar twin of the
// vector kernels that are to compute it (MulMat does not call them yet:
// its f32 and f16 kernels still sum eight lanes by a multiply and a
// separate add; see docs/performance.md).

// sgemmDot is tinyBLAS's dot product of a weight row (little-endian f32,
// or f16 when t == F16, widened exactly) with activations y, len(y) a
// multiple of 16.
func sgemmDot(t Type, row []byte, y []float32) float32 {
	var s [16]float32
	tab := f16ToF32Table()
	for i := 0; i+16 <= len(y); i += 16 {
		for j := range s {
			var w float32
			if t == F16 {
				w = tab[binary.LittleEndian.Uint16(row[2*(i+j):])]
			} else {
				w = f32At(row, i+j)
			}
			s[j] = fmaF32(w, y[i+j], s[j])
		}
	}
	return reduce16(&s)
}

// fmaF32 is x·y + z rounded once to float32, as C's fmaf and each lane of
// VFMADD231PS compute it. x·y is exact in float64 and x·y + z rounded to
// float64 is then within half a float64 ulp of the exact value; rounding
// that to float32 is the correct result unless it lies exactly halfway
// between two float32s while the exact value does not, which the exact
// error of the float64 sum (Knuth's TwoSum) then decides.
func fmaF32(x, y, z float32) float32 {
	xy := float64(x) * float64(y)
	zz := float64(z)
	r := xy + zz
	f := float32(r)
	if float64(f) == r || math.IsNaN(r) || math.IsInf(r, 0) {
		return f
	}
	// g: f's neighbour on r's other side; mid: their midpoint.
	var g float32
	ff := float64(f)
	if math.IsInf(ff, 0) { // rounded up past MaxFloat32: the boundary is 2^128
		ff = math.Copysign(0x1p128, ff)
	}
	if ff > r {
		g = math.Nextafter32(f, float32(math.Inf(-1)))
	} else {
		g = math.Nextafter32(f, float32(math.Inf(1)))
	}
	gg := float64(g)
	if math.IsInf(gg, 0) {
		gg = math.Copysign(0x1p128, gg)
	}
	if (ff+gg)/2 != r {
		return f
	}
	bv := r - xy
	err := (xy - (r - bv)) + (zz - bv)
	if err == 0 {
		return f // a true tie: float32(r) rounded it to even
	}
	if (err > 0) == (gg > ff) {
		return g
	}
	return f
}

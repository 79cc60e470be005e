//go:build goexperiment.simd && amd64

package mulmat

import (
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
)

// dequantRowQ6_KVec is dequantizeBlockQ6_K over the len(y)/256 blocks of
// x, for the generic MulMat path's weight tiles (mulmat_generic.go), on
// CPUs with AVX2. Each value is float32(float32(d·sc)·q), as in the
// scalar code: the products d·sc are computed first by scalar code, then
// the 6-bit quants are assembled, widened and scaled by vector code, so
// the values are identical. It reports false (having done nothing) when
// the CPU lacks AVX2.
func (ks *Kernels) dequantRowQ6_KVec(x []byte, y []float32) bool {
	if !ks.Vec {
		return false
	}
	nb := len(y) / codec.QKK
	if nb == 0 {
		return true
	}
	x = x[:nb*codec.SizeQ6_K]
	// The scales first, in scalar code (16 per block, and 3 more to read).
	ops.ClearUpper()
	sc := make([]float32, 16*nb+3)
	for b := range nb {
		blk := x[b*codec.SizeQ6_K : (b+1)*codec.SizeQ6_K]
		d := codec.F16At(blk, 208)
		for i := range 16 {
			sc[16*b+i] = float32(d * float32(int8(blk[192+i])))
		}
	}
	m4 := archsimd.BroadcastUint8x32(0x0f)
	m3 := archsimd.BroadcastUint8x32(0x03)
	c32 := archsimd.BroadcastInt8x32(32)
	s2, s4, s6 := archsimd.BroadcastUint32x8(2), archsimd.BroadcastUint32x8(4), archsimd.BroadcastUint32x8(6)
	var q [136]int8 // 128 quants; the last 16-byte load reads 8 past them
	px, py, ps := unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&sc[0])
	pq := unsafe.Pointer(&q[0])
	for b := range nb {
		for h := 0; h < 2; h++ { // the two halves of 128 values
			base := unsafe.Add(px, b*codec.SizeQ6_K)
			ql := unsafe.Add(base, 64*h)
			qh := unsafe.Add(base, 128+32*h)
			a := archsimd.LoadUint8x32((*[32]uint8)(ql))
			bb := archsimd.LoadUint8x32((*[32]uint8)(unsafe.Add(ql, 32)))
			hh := archsimd.LoadUint8x32((*[32]uint8)(qh)).AsUint32x8()
			hi := func(v archsimd.Uint32x8) archsimd.Uint8x32 {
				return v.AsUint8x32().And(m3).AsUint32x8().ShiftLeft(s4).AsUint8x32()
			}
			q1 := a.And(m4).Or(hi(hh))
			q2 := bb.And(m4).Or(hi(hh.ShiftRight(s2)))
			q3 := a.AsUint32x8().ShiftRight(s4).AsUint8x32().And(m4).Or(hi(hh.ShiftRight(s4)))
			q4 := bb.AsUint32x8().ShiftRight(s4).AsUint8x32().And(m4).Or(hi(hh.ShiftRight(s6)))
			q1.AsInt8x32().Sub(c32).Store((*[32]int8)(pq))
			q2.AsInt8x32().Sub(c32).Store((*[32]int8)(unsafe.Add(pq, 32)))
			q3.AsInt8x32().Sub(c32).Store((*[32]int8)(unsafe.Add(pq, 64)))
			q4.AsInt8x32().Sub(c32).Store((*[32]int8)(unsafe.Add(pq, 96)))
			// Value j of the half (q[j]) has scale 8h + j/16.
			out := unsafe.Add(py, 4*(codec.QKK*b+128*h))
			s := unsafe.Add(ps, 4*(16*b+8*h))
			for c := 0; c < 16; c++ {
				v := archsimd.LoadInt8x16((*[16]int8)(unsafe.Add(pq, 8*c))).ExtendLo8ToInt32().ConvertToFloat32()
				f := archsimd.LoadFloat32x4((*[4]float32)(unsafe.Add(s, 4*(c/2)))).Broadcast1To8()
				v.Mul(f).Store((*[8]float32)(unsafe.Add(out, 32*c)))
			}
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}

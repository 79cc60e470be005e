//go:build goexperiment.simd && amd64

package cpu

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// SoftMaxPrepVec does the first steps of a soft_max row in float32 lanes
// (sixteen with AVX-512, else eight with AVX2): w[i] = x[i]*scale, then,
// with a mask row, w[i] += slope*mrow[i] (a multiply and an add, as the
// scalar code), and returns max_i w[i]. x may be w itself (the row in
// place) or the source row, read where it lies (no copy into w first). A
// NaN in w makes the maximum NaN, as Go's max does in the scalar loop
// (VMAXPS alone would drop it); the lanes' maximum is otherwise the
// scalar one whatever the grouping (an exact operation; a ±0 maximum may
// take either sign, which changes no w - max). It reports false, having
// done nothing, without AVX2.
func (ks *Kernels) SoftMaxPrepVec(w, x []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	n := len(w)
	if !ks.Exp4 || n < 8 {
		return 0, false
	}
	x = x[:n]
	if mrow != nil {
		mrow = mrow[:n]
	}
	p, px := unsafe.Pointer(&w[0]), unsafe.Pointer(&x[0])
	var pm unsafe.Pointer
	if mrow != nil {
		pm = unsafe.Pointer(&mrow[0])
	}
	i := 0
	mx := archsimd.BroadcastFloat32x8(float32(math.Inf(-1)))
	var nan archsimd.Mask32x8
	var nan16Bits uint16
	if ks.Vec512 && n >= 16 {
		sv := archsimd.BroadcastFloat32x16(scale)
		sl := archsimd.BroadcastFloat32x16(slope)
		mx16 := archsimd.BroadcastFloat32x16(float32(math.Inf(-1)))
		var nan16 archsimd.Mask32x16
		if pm != nil {
			for ; i+16 <= n; i += 16 {
				v := archsimd.LoadFloat32x16(at16(px, i)).Mul(sv).Add(sl.Mul(archsimd.LoadFloat32x16(at16(pm, i))))
				v.Store(at16(p, i))
				mx16 = mx16.Max(v)
				nan16 = nan16.Or(v.IsNaN())
			}
		} else {
			for ; i+16 <= n; i += 16 {
				v := archsimd.LoadFloat32x16(at16(px, i)).Mul(sv)
				v.Store(at16(p, i))
				mx16 = mx16.Max(v)
				nan16 = nan16.Or(v.IsNaN())
			}
		}
		mx = mx16.GetLo().Max(mx16.GetHi())
		nan16Bits = nan16.ToBits()
	}
	sv := archsimd.BroadcastFloat32x8(scale)
	sl := archsimd.BroadcastFloat32x8(slope)
	if pm != nil {
		for ; i+8 <= n; i += 8 {
			v := LoadF32x8(px, 4*i).Mul(sv).Add(sl.Mul(LoadF32x8(pm, 4*i)))
			v.Store(at(p, i))
			mx = mx.Max(v)
			nan = nan.Or(v.IsNaN())
		}
	} else {
		for ; i+8 <= n; i += 8 {
			v := LoadF32x8(px, 4*i).Mul(sv)
			v.Store(at(p, i))
			mx = mx.Max(v)
			nan = nan.Or(v.IsNaN())
		}
	}
	var l [8]float32
	mx.Store(&l)
	hasNaN := nan.ToBits() != 0 || nan16Bits != 0
	archsimd.ClearAVXUpperBits()
	m := max(max(l[0], l[1]), max(l[2], l[3]), max(max(l[4], l[5]), max(l[6], l[7])))
	for ; i < n; i++ {
		w[i] = x[i] * scale
		if mrow != nil {
			w[i] += slope * mrow[i]
		}
		m = max(m, w[i])
	}
	if hasNaN {
		return float32(math.NaN()), true
	}
	return m, true
}

// ScaleRowVec sets w[i] *= s in sixteen lanes (AVX-512) or eight (AVX2),
// reporting false (and doing nothing) without AVX2.
func (ks *Kernels) ScaleRowVec(w []float32, s float32) bool {
	n := len(w)
	if !ks.Exp4 || n < 8 {
		return false
	}
	p := unsafe.Pointer(&w[0])
	i := 0
	if ks.Vec512 {
		sv := archsimd.BroadcastFloat32x16(s)
		for ; i+16 <= n; i += 16 {
			archsimd.LoadFloat32x16(at16(p, i)).Mul(sv).Store(at16(p, i))
		}
	}
	sv := archsimd.BroadcastFloat32x8(s)
	for ; i+8 <= n; i += 8 {
		ptr := (*[8]float32)(unsafe.Add(p, 4*i))
		archsimd.LoadFloat32x8(ptr).Mul(sv).Store(ptr)
	}
	archsimd.ClearAVXUpperBits()
	for ; i < n; i++ {
		w[i] *= s
	}
	return true
}

//go:build goexperiment.simd && amd64

package ops

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// softMaxPrepVec does the first steps of a soft_max row in eight float32
// lanes (AVX2): w[i] = w[i]*scale, then, with a mask row, w[i] +=
// slope*mrow[i] (a multiply and an add, as the scalar code), and returns
// max_i w[i]. A NaN in w makes the maximum NaN, as Go's max does in the
// scalar loop (VMAXPS alone would drop it). It reports false, having
// done nothing, without AVX2.
func softMaxPrepVec(w []float32, scale float32, mrow []float32, slope float32) (float32, bool) {
	n := len(w)
	if !vecExp4 || n < 8 {
		return 0, false
	}
	if mrow != nil {
		mrow = mrow[:n]
	}
	sv := archsimd.BroadcastFloat32x8(scale)
	sl := archsimd.BroadcastFloat32x8(slope)
	mx := archsimd.BroadcastFloat32x8(float32(math.Inf(-1)))
	var nan archsimd.Mask32x8
	p := unsafe.Pointer(&w[0])
	i := 0
	if mrow != nil {
		pm := unsafe.Pointer(&mrow[0])
		for ; i+8 <= n; i += 8 {
			ptr := (*[8]float32)(unsafe.Add(p, 4*i))
			x := archsimd.LoadFloat32x8(ptr).Mul(sv).Add(sl.Mul(loadF32x8(pm, 4*i)))
			x.Store(ptr)
			mx = mx.Max(x)
			nan = nan.Or(x.IsNaN())
		}
	} else {
		for ; i+8 <= n; i += 8 {
			ptr := (*[8]float32)(unsafe.Add(p, 4*i))
			x := archsimd.LoadFloat32x8(ptr).Mul(sv)
			x.Store(ptr)
			mx = mx.Max(x)
			nan = nan.Or(x.IsNaN())
		}
	}
	var l [8]float32
	mx.Store(&l)
	hasNaN := nan.ToBits() != 0
	archsimd.ClearAVXUpperBits()
	m := max(max(l[0], l[1]), max(l[2], l[3]), max(max(l[4], l[5]), max(l[6], l[7])))
	for ; i < n; i++ {
		w[i] *= scale
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

// scaleRowVec sets w[i] *= s in eight lanes (AVX2), reporting false (and
// doing nothing) without AVX2.
func scaleRowVec(w []float32, s float32) bool {
	n := len(w)
	if !vecExp4 || n < 8 {
		return false
	}
	sv := archsimd.BroadcastFloat32x8(s)
	p := unsafe.Pointer(&w[0])
	i := 0
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

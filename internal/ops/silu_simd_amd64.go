//go:build goexperiment.simd && amd64

package ops

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// vecExp reports whether silu and swiglu run in vector lanes: they need
// FMA as well as AVX2; vecExp512 that they run sixteen lanes at a time
// with VSCALEFPS (AVX-512).
var (
	vecExp    = vecRow && archsimd.X86.FMA()
	vecExp512 = vecExp && archsimd.X86.AVX512()
)

// siluAVX512 runs ggml's vector silu (see silu.go) over n values at px, n
// a multiple of 16, into pd, times the gate at pg unless pg is nil
// (swiglu), sixteen lanes a step with AVX-512 (silu_amd64.s): each lane
// does expGGML's and siluGGML's operations, so the results are theirs
// bit for bit (TestSiluVecMatchesScalar). It clears the upper halves.
//
//go:noescape
func siluAVX512(pd, px, pg unsafe.Pointer, n int)

// siluVec8x2 is siluAVX512 on CPUs with AVX2 and FMA but no AVX-512: two
// chains of eight lanes a step, the same operations, and j·2^n (no
// VSCALEFPS) as (j·2^h)·2^(n−h) with h = ⌊n/2⌋: the first product is
// exact (|h| <= 96 keeps it normal), the second rounds once, as
// VSCALEFPS does.
func siluVec8x2(pd, px, pg unsafe.Pointer, n int) {
	b := archsimd.BroadcastFloat32x8
	var zero f32x8
	shift, log2e := b(expgShift), b(expgLog2e)
	nHi, nLo := b(-expgLn2Hi), b(-expgLn2Lo)
	c5, c4, c3, c2, c1 := b(expgC5), b(expgC4), b(expgC3), b(expgC2), b(expgC1)
	one, big, nbig := b(1), b(expgBig), b(-expgBig)
	inf := b(float32(math.Inf(1)))
	bias := archsimd.BroadcastInt32x8(127)
	exp := func(nx f32x8) f32x8 {
		k := nx.MulAdd(log2e, shift).Sub(shift)
		r := k.MulAdd(nLo, k.MulAdd(nHi, nx))
		u := r.Mul(r)
		j := c5.MulAdd(r, c4).MulAdd(u, c3.MulAdd(r, c2)).MulAdd(u, c1.MulAdd(r, one))
		ki := k.ConvertToInt32() // k is an integer; lanes |k| > 192 are replaced below
		h := ki.ShiftAllRight(1)
		s1 := h.Add(bias).ShiftAllLeft(23).AsFloat32x8()
		s2 := ki.Sub(h).Add(bias).ShiftAllLeft(23).AsFloat32x8()
		e := j.Mul(s1).Mul(s2)
		e = inf.Merge(e, k.Greater(big))
		return zero.Merge(e, k.Less(nbig))
	}
	for i := 0; i < n; i += 16 {
		x0, x1 := archsimd.LoadFloat32x8(at(px, i)), archsimd.LoadFloat32x8(at(px, i+8))
		y0 := x0.Div(one.Add(exp(zero.Sub(x0))))
		y1 := x1.Div(one.Add(exp(zero.Sub(x1))))
		if pg != nil {
			y0 = y0.Mul(archsimd.LoadFloat32x8(at(pg, i)))
			y1 = y1.Mul(archsimd.LoadFloat32x8(at(pg, i+8)))
		}
		y0.Store(at(pd, i))
		y1.Store(at(pd, i+8))
	}
}

// siluVecRun runs the vector silu of this CPU over n values (a multiple of
// 16) and clears the upper halves.
func siluVecRun(pd, px, pg unsafe.Pointer, n int) {
	if vecExp512 {
		siluAVX512(pd, px, pg, n)
		return
	}
	siluVec8x2(pd, px, pg, n)
	archsimd.ClearAVXUpperBits()
}

func siluRow(dst, x []float32) {
	n := len(x) &^ (siluBlock - 1)
	if !vecExp || n == 0 {
		siluRowScalar(dst, x)
		return
	}
	dst = dst[:len(x)]
	siluVecRun(ptr(dst), ptr(x), nil, n)
	siluRowScalar(dst[n:], x[n:])
}

func swigluRow(dst, a, b []float32) {
	n := len(a) &^ (siluBlock - 1)
	if !vecExp || n == 0 {
		swigluRowScalar(dst, a, b)
		return
	}
	b, dst = b[:len(a)], dst[:len(a)]
	siluVecRun(ptr(dst), ptr(a), ptr(b), n)
	swigluRowScalar(dst[n:], a[n:], b[n:])
}

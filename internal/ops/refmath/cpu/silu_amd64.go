package cpu

import (
	"unsafe"
)

// siluAVX512 runs ggml's vector silu (see silu.go) over n values at px, n
// a multiple of 16, into pd, times the gate at pg unless pg is nil
// (swiglu), sixteen lanes a step, 32 values in two chains, every value in
// a register. (An archsimd version spilled to Go's 8-byte aligned stack
// and ran four times slower in some frames: cache-line splits.) It
// clears the upper halves of the vector registers.
//
//go:noescape
func siluAVX512(pd, px, pg unsafe.Pointer, n int)

// siluAVX2 is siluAVX512 with AVX2 and FMA, eight lanes in two chains:
// where all 16 values of a step have |x| <= 86 it scales by 2^n with an
// integer add to the exponent (as ggml's AVX2 exp does on its fast path),
// else it emulates VSCALEFPS and the range checks of the full method;
// the same bits either way.
//
//go:noescape
func siluAVX2(pd, px, pg unsafe.Pointer, n int)

func (ks *Kernels) siluVecRun(pd, px, pg unsafe.Pointer, n int) {
	if ks.AVX512 {
		siluAVX512(pd, px, pg, n)
	} else {
		siluAVX2(pd, px, pg, n)
	}
}

// SiluRow is dst = silu(x) by ggml's split of a row (siluGGML on the
// vector part, SiluF32 after).
func (ks *Kernels) SiluRow(dst, x []float32) {
	n := len(x) &^ (SiluBlock - 1)
	if !ks.AVX2 || n == 0 {
		siluRowScalar(dst, x)
		return
	}
	dst = dst[:len(x)]
	ks.siluVecRun(unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0]), nil, n)
	siluRowScalar(dst[n:], x[n:])
}

// SwigluRow is dst = silu(a)·b by ggml's split of a row.
func (ks *Kernels) SwigluRow(dst, a, b []float32) {
	n := len(a) &^ (SiluBlock - 1)
	if !ks.AVX2 || n == 0 {
		swigluRowScalar(dst, a, b)
		return
	}
	b, dst = b[:len(a)], dst[:len(a)]
	ks.siluVecRun(unsafe.Pointer(&dst[0]), unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), n)
	swigluRowScalar(dst[n:], a[n:], b[n:])
}

// softMaxExpAVX512 and softMaxExpAVX2 are softMaxExpScalar (soft_max's
// exps and their sum, ggml's AVX-512 build's) over n values at p, n a
// multiple of 16: bit for bit its results and sum (TestSoftMaxExpVec).
//
//go:noescape
func softMaxExpAVX512(p unsafe.Pointer, n int, m float32) float64

//go:noescape
func softMaxExpAVX2(p unsafe.Pointer, n int, m float32) float64

// SoftMaxExpVec sets w[i] = exp(w[i] - m) as ggml's soft_max does and
// returns Σ w[i] in float64.
func (ks *Kernels) SoftMaxExpVec(w []float32, m float32) float64 {
	switch {
	case ks.AVX512:
		return softMaxExpAVX512(unsafe.Pointer(&w[0]), len(w), m)
	case ks.AVX2:
		return softMaxExpAVX2(unsafe.Pointer(&w[0]), len(w), m)
	}
	return softMaxExpScalar(w, m)
}

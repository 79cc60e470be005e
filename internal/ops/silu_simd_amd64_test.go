//go:build goexperiment.simd && amd64

package ops

import (
	"math"
	"testing"
	"unsafe"
)

// TestSiluVecMatchesScalar checks both vector silu kernels, siluAVX512
// (AVX-512) and siluVec8x2 (AVX2 and FMA), with and without a gate,
// against siluGGML lane by lane, bit for bit (any NaN where it gives a
// NaN): on float32 bit patterns at a stride (ET_SILU_VEC_STRIDE; 1 is all
// 2^32), then on the special values at every position of a 16-value step.
// siluRow and swigluRow must also split each row as ggml does, the vector
// method on the first len&^15 values and the C library's expf after.
func TestSiluVecMatchesScalar(t *testing.T) {
	if !vecExp {
		t.Skip("CPU without AVX2 and FMA")
	}
	kernels := []struct {
		name string
		ok   bool
		run  func(pd, px, pg unsafe.Pointer, n int)
	}{{"avx512", vecExp512, siluAVX512}, {"avx2", true, siluVec8x2}}
	const chunk = 1 << 16
	g := make([]float32, chunk)
	for i := range g {
		g[i] = float32(i%29-14) * 0.37
	}
	g[5], g[6], g[7], g[40] = float32(math.Inf(1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1))
	got := make([]float32, chunk)
	check := func(x []float32) {
		m := len(x) &^ 15
		for _, k := range kernels {
			if !k.ok || m == 0 {
				continue
			}
			for _, gate := range [][]float32{nil, g} {
				pg := ptr(nil)
				if gate != nil {
					pg = ptr(gate)
				}
				k.run(ptr(got), ptr(x), pg, m)
				clearUpper()
				for i := range m {
					want := siluGGML(x[i])
					if gate != nil {
						want *= gate[i]
					}
					if !sameBits(got[i], want) {
						t.Fatalf("%s, gate %v: silu(%g [%#08x]) = %#08x, scalar %#08x", k.name, gate != nil, x[i],
							math.Float32bits(x[i]), math.Float32bits(got[i]), math.Float32bits(want))
					}
				}
			}
		}
	}
	stride := envStride("ET_SILU_VEC_STRIDE", 251)
	n := bitPatterns(stride, chunk, check)
	sp := specialF32()
	for off := range 16 {
		y := make([]float32, 16*((len(sp)+31)/16))
		for i := range y {
			y[i] = sp[(i+off)%len(sp)]
		}
		check(y)
	}
	// The row split: vector blocks, then the scalar tail.
	x := randVals(41, 100, -20, 20)
	for m := 0; m <= len(x); m++ {
		siluRow(got[:m], x[:m])
		for i := range m {
			want := siluGGML(x[i])
			if i >= m&^15 {
				want = siluF32(x[i])
			}
			if !sameBits(got[i], want) {
				t.Fatalf("len %d: siluRow[%d] = %#08x, want %#08x", m, i, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		swigluRow(got[:m], x[:m], g[:m])
		for i := range m {
			want := siluGGML(x[i]) * g[i]
			if i >= m&^15 {
				want = siluF32(x[i]) * g[i]
			}
			if !sameBits(got[i], want) {
				t.Fatalf("len %d: swigluRow[%d] = %#08x, want %#08x", m, i, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
	t.Logf("%d bit patterns (stride %d) and the special values: bit-identical", n, stride)
}

package codec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeVecMatchesScalar: the q8_0 and q4_0 row quantizers, through each vector
// quantizer the build and CPU have (AVX-512, AVX2) and the scalar code,
// writes the bytes of the scalar reference quantizers, block by block,
// for random data, rounding ties, equal magnitudes of both signs, zeros
// of both signs, subnormals, scales whose inverse overflows, huge values,
// NaN and infinities, over several chunks.
func TestQuantizeVecMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var blocks [][]float32
	add := func(f func(j int) float32) {
		b := make([]float32, 32)
		for j := range b {
			b[j] = f(j)
		}
		blocks = append(blocks, b)
	}
	for range 300 {
		s := float32(math.Pow(10, r.Float64()*8-4))
		add(func(int) float32 { return float32(r.NormFloat64()) * s })
	}
	// q8_0 ties: amax 127 gives d = 1, so x·id = x, halves exactly.
	add(func(j int) float32 {
		if j == 0 {
			return 127
		}
		return float32(j-16) + 0.5
	})
	add(func(j int) float32 {
		if j == 31 {
			return -127
		}
		return -float32(j) - 0.5
	})
	// q4_0: the first element of largest magnitude decides the sign.
	add(func(j int) float32 { return []float32{0.5, -0.5}[j%2] })
	add(func(j int) float32 { return []float32{-0.5, 0.5}[j%2] })
	add(func(j int) float32 {
		if j == 20 {
			return -3
		}
		if j == 25 {
			return 3
		}
		return float32(j) / 40
	})
	add(func(int) float32 { return 0 })
	add(func(int) float32 { return float32(math.Copysign(0, -1)) })
	add(func(j int) float32 {
		if j == 0 {
			return float32(math.Copysign(0, -1))
		}
		return 0
	})
	add(func(j int) float32 { return math.Float32frombits(uint32(j + 1)) })              // subnormals
	add(func(j int) float32 { return float32(j-16) * 1e37 })                             // huge
	add(func(j int) float32 { return float32(j-16) * 0x1p-135 })                         // d subnormal, 1/d = +Inf
	add(func(j int) float32 { return float32(j+100) * 0x1p-132 })                        // d subnormal, 1/d finite
	add(func(j int) float32 { return float32(31-j) * 0x1p-126 })                         // q4_0: d subnormal
	add(func(j int) float32 { return []float32{1, -2, 3, -3, 2}[j%5] * float32(j/5+1) }) // equal magnitudes in every vector
	add(func(j int) float32 { return float32(j) + float32(math.NaN())*float32(j%7/6) })  // NaN at j = 6, 13, ...
	add(func(j int) float32 {
		if j == 9 {
			return float32(math.Inf(-1))
		}
		return float32(j)
	})
	add(func(j int) float32 {
		if j == 9 {
			return float32(math.Inf(1))
		}
		return -float32(j)
	})
	var src []float32
	for _, b := range blocks {
		src = append(src, b...)
	}
	for _, lanes := range quantKernels() {
		for _, f := range []struct {
			name  string
			bs    int
			row   func(int, []float32, []byte)
			block func([]float32, []byte)
		}{{"q8_0", 34, quantizeQ8_0, QuantizeBlockQ8_0}, {"q4_0", 18, quantizeQ4_0, quantizeBlockQ4_0}} {
			got := make([]byte, len(src)/32*f.bs)
			f.row(lanes, src, got)
			bs := f.bs
			for i, b := range blocks {
				want := make([]byte, bs)
				f.block(b, want)
				if g := got[i*bs : (i+1)*bs]; !bytes.Equal(g, want) {
					t.Errorf("%s, %d lanes, block %d %v: got % x, scalar % x", f.name, lanes, i, b, g, want)
				}
			}
		}
	}
}

// Package opstest holds small helpers shared by the tests of the op
// packages (ops, refmath): golden-file readers and input sequences. It
// imports nothing of et's.
package opstest

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"strings"
	"testing"
)

// ReadF32File reads a file of little-endian float32 values (the golden
// files the testdata generators write).
func ReadF32File(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Seq is f(0), f(1), ..., f(n-1).
func Seq(n int, f func(i int) float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = f(i)
	}
	return x
}

// EqualBits reports whether a and b hold the same float32 bit patterns.
func EqualBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// GoldenInput is the 512 values the quantizer golden tests quantize:
// (i*37 mod 101 - 50)/25, every value exact in float32.
func GoldenInput() []float32 {
	x := make([]float32, 512)
	for i := range x {
		x[i] = float32((i*37%101)-50) / 25.0
	}
	return x
}

// RandVals is n values uniform in [lo, hi), from math/rand's source seed
// (the same values at every run).
func RandVals(seed int64, n int, lo, hi float32) []float32 {
	r := rand.New(rand.NewSource(seed))
	out := make([]float32, n)
	for i := range out {
		out[i] = lo + (hi-lo)*r.Float32()
	}
	return out
}

// RandF32 is n values uniform in [-1, 1) from r.
func RandF32(r *randv2.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()*2 - 1
	}
	return x
}

// RowVals is RandVals in [-4, 4) with special values (signed zeros,
// infinities, NaN, subnormals, f16 overflow and rounding edges) at every
// third index from 0.
func RowVals(seed int64, n int) []float32 {
	v := RandVals(seed, n, -4, 4)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, 65504, 65520, -70000, 1e30, 5.96e-8, -2.98e-8}
	for i, s := range special {
		if 3*i < n {
			v[3*i] = s
		}
	}
	return v
}

// SameBits reports whether a and b are the same float32, any NaN
// matching any NaN.
func SameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// CheckClose fails t unless got and want have the same length and every
// value is within tol of want, relative to max(1, |want|) (NaN matching
// NaN).
func CheckClose(t testing.TB, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			t.Fatalf("element %d: got %.9g, want %.9g (tolerance %g)\n got %v\nwant %v", i, g, w, tol, got, want)
		}
	}
}

// GoldenLCG is the generator of the golden files' inputs
// (refmath/testdata/softmaxgen/gen.c and sgemmgen): multiples of 1/4096
// in [-8, 8), exact in float32.
type GoldenLCG uint32

// Next is the generator's next value.
func (s *GoldenLCG) Next() float32 {
	*s = *s*1664525 + 1013904223
	return float32(uint32(*s)>>8&0xffff)/4096 - 8
}

// WantInputError fails t unless err, what's error, contains every
// fragment and is an input error (has an InputError method).
func WantInputError(t testing.TB, what string, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one containing %q", what, fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("%s: error %q does not contain %q", what, err, f)
		}
	}
	var ie interface{ InputError() }
	if !errors.As(err, &ie) {
		t.Errorf("%s: error %q (%T) is not an input error", what, err, err)
	}
}

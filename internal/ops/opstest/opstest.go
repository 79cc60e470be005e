// Package opstest holds small helpers shared by the tests of the op
// packages (ops, refmath): golden-file readers and input sequences. It
// imports nothing of et's.
package opstest

import (
	"encoding/binary"
	"math"
	"os"
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

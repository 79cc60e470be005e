package cpu

import (
	"math"
)

// SiluF32 is ggml's scalar silu, x/(1+e^-x), in float32.
func SiluF32(x float32) float32 { return x / (1 + Expf32(-x)) }

// Expf32, Expm1f32, Tanhf32, Logf32 and Powf32 are the C float
// functions, through float64 (within an ulp of glibc's).
func Expf32(x float32) float32 { return float32(math.Exp(float64(x))) }

// Expm1f32 is C's expm1f.
func Expm1f32(x float32) float32 { return float32(math.Expm1(float64(x))) }

// Tanhf32 is C's tanhf.
func Tanhf32(x float32) float32 { return float32(math.Tanh(float64(x))) }

// Logf32 is C's logf.
func Logf32(x float32) float32 { return float32(math.Log(float64(x))) }

// Powf32 is C's powf.
func Powf32(x, y float32) float32 {
	return float32(math.Pow(float64(x), float64(y)))
}

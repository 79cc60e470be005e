package cpu

import (
	"math"
)

func SiluF32(x float32) float32 { return x / (1 + Expf32(-x)) }

// The C float functions, through float64 (within an ulp of glibc's).
func Expf32(x float32) float32 { return float32(math.Exp(float64(x))) }

package ops

import (
	"fmt"
	"math"
)

// Default NMSE limits of test-backend-ops (reference/ggml-et-backend.md
// §6.3).
const (
	// DefaultMaxNMSE is test-backend-ops' default max_nmse_err.
	DefaultMaxNMSE = 1e-7
	// MatMulMaxNMSE is the limit for MUL_MAT, MUL_MAT_ID, FLASH_ATTN_EXT
	// and the convolutions.
	MatMulMaxNMSE = 5e-4
	// SoftMaxMaxNMSE is the limit for SOFT_MAX.
	SoftMaxMaxNMSE = 1e-6
)

// Failure kinds of a comparison, in the order test-backend-ops checks them.
const (
	FailNone         = ""
	FailNaN          = "nan"               // a NaN in either output
	FailInfMismatch  = "inf_mismatch"      // one side ±inf (or ±FLT_MAX), the other finite
	FailInfSign      = "inf_sign_mismatch" // both infinite, opposite signs
	FailNMSE         = "nmse"              // NMSE above the limit
	FailLengthDiffer = "length_mismatch"   // the outputs have different element counts
)

// Comparison is the result of comparing a tested output with the
// reference, the way test-backend-ops judges one node.
type Comparison struct {
	// N is the number of elements compared.
	N int
	// NMSE is Σ(got−want)² / Σgot², accumulated in float64 from float32
	// terms, exactly as test-backend-ops computes it. Positions where
	// both sides are the same infinity contribute NaN, as upstream.
	NMSE float64
	// MaxAbsErr is the largest |got−want| over elements where both are
	// finite, and MaxAbsIndex its position (−1 if none).
	MaxAbsErr   float64
	MaxAbsIndex int
	// MaxNMSE is the limit the comparison was judged against.
	MaxNMSE float64
	// Failure is FailNone when the output passes; otherwise the first
	// failing check, at element Index (for NaN and inf checks).
	Failure string
	Index   int
	// Got and Want are the values at Index for NaN and inf failures.
	Got, Want float32
}

// OK reports whether the comparison passed.
func (c Comparison) OK() bool { return c.Failure == FailNone }

// String describes a failure as test-backend-ops prints it ("NaN at index
// 3 (got=nan want=1.000000)", "NMSE = 0.000612345 > 0.000500000"), or
// "ok".
func (c Comparison) String() string {
	switch c.Failure {
	case FailNone:
		return fmt.Sprintf("ok (NMSE = %.9f <= %.9f)", c.NMSE, c.MaxNMSE)
	case FailNaN:
		return fmt.Sprintf("NaN at index %d (got=%f want=%f)", c.Index, c.Got, c.Want)
	case FailInfMismatch:
		return fmt.Sprintf("inf mismatch at index %d: got=%f want=%f", c.Index, c.Got, c.Want)
	case FailInfSign:
		return fmt.Sprintf("inf sign mismatch at index %d: got=%f want=%f", c.Index, c.Got, c.Want)
	case FailLengthDiffer:
		return fmt.Sprintf("length mismatch: got %d values, want %d", c.Index, c.N)
	}
	return fmt.Sprintf("NMSE = %.9f > %.9f", c.NMSE, c.MaxNMSE)
}

// isInfOrMax is test-backend-ops' isinf_or_max: ±inf or ±FLT_MAX.
func isInfOrMax(f float32) bool {
	return math.IsInf(float64(f), 0) || f == math.MaxFloat32 || f == -math.MaxFloat32
}

// NMSE is test-backend-ops' nmse(a, b): Σ(a−b)²/Σa², with a the tested
// output. Each term is a float32 product added to a float64 sum. 0/0 is
// NaN, which passes any limit, as upstream.
func NMSE(a, b []float32) float64 {
	var ab, a0 float64
	for i := range a {
		ai, bi := a[i], b[i]
		d := ai - bi
		ab += float64(float32(d * d))
		a0 += float64(float32(ai * ai))
	}
	return ab / a0
}

// Compare judges the tested output got against the reference want with
// test-backend-ops' rules: first, element by element, a NaN on either
// side fails, and ±inf (or ±FLT_MAX) must appear on both sides with the
// same sign; then NMSE(got, want) must not exceed maxNMSE. It also
// reports the max abs error, which test-backend-ops does not.
func Compare(got, want []float32, maxNMSE float64) Comparison {
	c := Comparison{N: len(want), MaxNMSE: maxNMSE, MaxAbsIndex: -1}
	if len(got) != len(want) {
		c.Failure, c.Index = FailLengthDiffer, len(got)
		return c
	}
	for i := range got {
		g, w := got[i], want[i]
		if g != g || w != w {
			c.Failure, c.Index, c.Got, c.Want = FailNaN, i, g, w
			break
		}
		gi, wi := isInfOrMax(g), isInfOrMax(w)
		if gi || wi {
			if gi && wi {
				if math.Signbit(float64(g)) != math.Signbit(float64(w)) {
					c.Failure, c.Index, c.Got, c.Want = FailInfSign, i, g, w
					break
				}
			} else {
				c.Failure, c.Index, c.Got, c.Want = FailInfMismatch, i, g, w
				break
			}
			continue
		}
		if d := math.Abs(float64(g) - float64(w)); d > c.MaxAbsErr || c.MaxAbsIndex < 0 {
			c.MaxAbsErr, c.MaxAbsIndex = d, i
		}
	}
	c.NMSE = NMSE(got, want)
	if c.Failure == FailNone && c.NMSE > maxNMSE {
		c.Failure = FailNMSE
	}
	return c
}

package cpu

import (
	"github.com/ainekko/et/internal/ops"
)

// softMaxExpScalar is softMaxExpRow's vector part (len(w) a multiple of
// 16) one value at a time, for CPUs without the kernels.
func softMaxExpScalar(w []float32, m float32) float64 {
	var sum float64
	for b := 0; b+16 <= len(w); b += 16 {
		if b&511 == 0 {
			ops.ClearUpper()
		}
		e := (*[16]float32)(w[b : b+16])
		for j, v := range e {
			e[j] = expGGML(v - m)
		}
		sum += float64(Reduce16(e))
	}
	return sum
}

// Reduce16 is _mm512_reduce_add_ps: the upper eight lanes plus the lower,
// then the upper four of those plus the lower, then lanes 2 and 3 plus 0
// and 1, then lane 1 plus lane 0.
func Reduce16(e *[16]float32) float32 {
	var t [8]float32
	for j := range t {
		t[j] = e[j+8] + e[j]
	}
	for j := range 4 {
		t[j] = t[j+4] + t[j]
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

package cpu

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// TestF32ToF16RowF16C checks VCVTPS2PH's conversion (every amd64 build)
// against F32ToF16; a NaN in any position of a group of eight, and
// groups of eight without one around it, make it hand that group to the
// scalar code and go on.
func TestF32ToF16RowF16C(t *testing.T) {
	if !host.F16C {
		t.Skip("no F16C")
	}
	checkF32ToF16Row(t, "f32ToF16RowF16C", host.f32ToF16RowF16C)
	nan := math.Float32frombits(0x7fc01234) // a payload F16C would keep
	// Lengths that take the 32-value AVX-512 steps, the eight-value ones and
	// the tail.
	for n := 8; n <= 100; n++ {
		for pos := 0; pos < n; pos++ {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i) + 0.3
			}
			src[pos] = nan
			if pos%2 == 1 {
				src[pos] = -nan
			}
			got := make([]uint16, n)
			host.f32ToF16RowF16C(got, src)
			for i, v := range src {
				if w := ops.F32ToF16(v); got[i] != w {
					t.Fatalf("n %d, NaN at %d: element %d (%g) = %#04x, want %#04x", n, pos, i, v, got[i], w)
				}
			}
		}
	}
}

package half

import (
	"math"
	"testing"
)

// TestRoundTrip widens every half and narrows it back: each finite half
// and infinity is exact both ways, every NaN becomes sign|0x7e00.
func TestRoundTrip(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := ToF32(h)
		want := h
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			if !math.IsNaN(float64(f)) {
				t.Fatalf("ToF32(%#04x) = %v, want NaN", h, f)
			}
			want = h&0x8000 | 0x7e00
		}
		if got := FromF32(f); got != want {
			t.Fatalf("FromF32(ToF32(%#04x) = %v) = %#04x, want %#04x", h, f, got, want)
		}
	}
}

func TestFromF32Rounding(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65519, 0x7bff}, {65520, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {0x1p-24, 0x0001}, {0x1p-25, 0}, {0x1.8p-25, 0x0001},
		{1 + 0x1p-11, 0x3c00}, {1 + 0x3p-11, 0x3c02}, // ties to even
	} {
		if got := FromF32(c.f); got != c.want {
			t.Errorf("FromF32(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

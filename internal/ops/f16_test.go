package ops

import (
	"math"
	"testing"
)

func TestF32ToF16Known(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"one", 1.0, 0x3c00},
		{"tenth", 0.1, 0x2e66},
		{"max", 65504, 0x7bff},
		{"overflow to inf", 65520, 0x7c00},
		{"just below overflow", 65519.996, 0x7bff},
		{"tiny to zero", 1e-8, 0x0000},
		{"neg 2.5", -2.5, 0xc100},
		{"third", 1.0 / 3, 0x3555},
		{"min subnormal", float32(math.Ldexp(1, -24)), 0x0001},
		{"half min subnormal ties to even", float32(math.Ldexp(1, -25)), 0x0000},
		{"1.5 min subnormal ties to even", float32(math.Ldexp(3, -25)), 0x0002},
		{"above half min subnormal", float32(math.Ldexp(1, -25)) * 1.0000001, 0x0001},
		{"min normal", float32(math.Ldexp(1, -14)), 0x0400},
		{"largest subnormal", float32(math.Ldexp(1023, -24)), 0x03ff},
		{"round into normal", float32(math.Ldexp(2047, -25)), 0x0400},
		{"neg zero", float32(math.Copysign(0, -1)), 0x8000},
		{"inf", float32(math.Inf(1)), 0x7c00},
		{"neg inf", float32(math.Inf(-1)), 0xfc00},
		{"nan", float32(math.NaN()), 0x7e00},
		{"neg nan", math.Float32frombits(0xffc00001), 0xfe00},
		{"tie to even down", 1 + float32(math.Ldexp(1, -11)), 0x3c00},
		{"tie to even up", 1 + float32(math.Ldexp(3, -11)), 0x3c02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToF16(tt.in); got != tt.want {
				t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
			}
		})
	}
}

// TestF16RoundTripExhaustive widens every half and narrows it back; every
// non-NaN must round-trip, every NaN must stay a NaN.
func TestF16RoundTripExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := F16ToF32(h)
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		if isNaN {
			if !math.IsNaN(float64(f)) {
				t.Fatalf("F16ToF32(%#04x) = %g, want NaN", h, f)
			}
			if back := F32ToF16(f); back != h&0x8000|0x7e00 {
				t.Fatalf("F32ToF16(NaN from %#04x) = %#04x", h, back)
			}
			continue
		}
		if back := F32ToF16(f); back != h {
			t.Fatalf("round trip %#04x -> %g -> %#04x", h, f, back)
		}
		if tab := F16ToF32Table()[h]; math.Float32bits(tab) != math.Float32bits(f) {
			t.Fatalf("table[%#04x] = %g, want %g", h, tab, f)
		}
	}
}

// TestF16ToF32Values checks the widening against float64 arithmetic.
func TestF16ToF32Values(t *testing.T) {
	for i := 0; i < 1<<15; i++ {
		h := uint16(i)
		e := int(h >> 10)
		m := float64(h & 0x3ff)
		if e == 31 {
			continue
		}
		var want float64
		if e == 0 {
			want = math.Ldexp(m, -24)
		} else {
			want = math.Ldexp(1024+m, e-25)
		}
		if got := F16ToF32(h); float64(got) != want {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, got, want)
		}
		if got := F16ToF32(h | 0x8000); float64(got) != -want {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h|0x8000, got, -want)
		}
	}
}

// TestF32ToF16Midpoints checks RNE on the exact midpoint between every
// pair of adjacent finite halves, and just either side of it.
func TestF32ToF16Midpoints(t *testing.T) {
	for i := 0; i < 0x7bff; i++ {
		lo, hi := uint16(i), uint16(i+1)
		mid := (float64(F16ToF32(lo)) + float64(F16ToF32(hi))) / 2
		want := lo
		if lo&1 == 1 {
			want = hi
		}
		if got := F32ToF16(float32(mid)); got != want {
			t.Fatalf("midpoint of %#04x,%#04x: got %#04x, want %#04x", lo, hi, got, want)
		}
		below := math.Nextafter32(float32(mid), 0)
		if got := F32ToF16(below); got != lo {
			t.Fatalf("below midpoint of %#04x,%#04x: got %#04x", lo, hi, got)
		}
		above := math.Nextafter32(float32(mid), float32(math.Inf(1)))
		if got := F32ToF16(above); got != hi {
			t.Fatalf("above midpoint of %#04x,%#04x: got %#04x", lo, hi, got)
		}
	}
}

// TestRoundF16Fast checks RoundF16 against the conversion round trip on
// every rounding tie and its neighbours at every exponent, both signs,
// and on a stride through all 2^32 bit patterns.
func TestRoundF16Fast(t *testing.T) {
	check := func(b uint32) {
		f := math.Float32frombits(b)
		got, want := RoundF16(f), F16ToF32(F32ToF16(f))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("RoundF16(%g = %#08x) = %#08x, F16ToF32(F32ToF16) = %#08x", f, b, math.Float32bits(got), math.Float32bits(want))
		}
	}
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff} {
			check(hi<<13 | lo)
		}
	}
	// Subnormal halves: ties at odd multiples of 2^-25.
	for k := 0; k < 2048; k++ {
		v := float32(k) * 0x1p-25
		b := math.Float32bits(v)
		for _, d := range []int32{-1, 0, 1} {
			check(uint32(int32(b) + d))
			check(uint32(int32(b)+d) | 0x80000000)
		}
	}
	for b := uint64(0); b < 1<<32; b += 4093 {
		check(uint32(b))
	}
}

func TestRoundF16Slice(t *testing.T) {
	var x []float32
	for b := uint64(0); b < 1<<32; b += 65521 {
		x = append(x, math.Float32frombits(uint32(b)))
	}
	x = append(x, 65504, 65519.996, 65520, -65520, 0x1p-14, 0x1.ffcp-15, 0x1p-25, -0x3p-25, float32(math.Copysign(0, -1)))
	y := append([]float32(nil), x...)
	RoundF16Slice(y)
	for i, f := range x {
		want := F16ToF32(F32ToF16(f))
		if math.Float32bits(y[i]) != math.Float32bits(want) && !(y[i] != y[i] && want != want) {
			t.Fatalf("roundF16Slice(%g) = %g, want %g", f, y[i], want)
		}
	}
}

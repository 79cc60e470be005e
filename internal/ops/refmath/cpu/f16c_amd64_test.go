package cpu

import (
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// f16cSets are this CPU's kernel sets with F16C, by name: the host's,
// and with AVX-512 the avx2 set too (the F16C steps alone, forced).
func f16cSets(t *testing.T) map[string]*Kernels {
	t.Helper()
	sets := map[string]*Kernels{}
	for _, name := range []string{"native", "avx2"} {
		if ks, err := host.Limit(name); err == nil && ks.F16C {
			sets[name] = &ks
		}
	}
	if len(sets) == 0 {
		t.Skip("no F16C")
	}
	return sets
}

// TestF32ToF16RowF16C checks VCVTPS2PH's conversion (every amd64 build),
// with AVX-512 and by F16C alone, against F32ToF16; a NaN in any position
// of a group of eight, and groups of eight without one around it, make it
// hand that group to the scalar code and go on.
func TestF32ToF16RowF16C(t *testing.T) {
	for name, ks := range f16cSets(t) {
		checkF32ToF16Row(t, name+" f32ToF16RowF16C", ks.f32ToF16RowF16C)
		nan := math.Float32frombits(0x7fc01234) // a payload F16C would keep
		// Lengths that take the 32-value steps (of both kernels), the
		// eight-value ones and the tail.
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
				ks.f32ToF16RowF16C(got, src)
				for i, v := range src {
					if w := ops.F32ToF16(v); got[i] != w {
						t.Fatalf("%s: n %d, NaN at %d: element %d (%g) = %#04x, want %#04x", name, n, pos, i, v, got[i], w)
					}
				}
			}
		}
	}
}

// TestF32ToF16Whole checks the one-call conversion of set_rows' rows:
// for a multiple of 8 values without NaN it converts them all (F32ToF16's
// halves) and says so, in both sets; otherwise it says it did not (a NaN,
// whose group it must leave to the scalar code, or a length it does not
// take), without writing past the row.
func TestF32ToF16Whole(t *testing.T) {
	for name, ks := range f16cSets(t) {
		for _, n := range []int{8, 24, 32, 40, 56, 64, 96, 1024, 1032, 1, 7, 9, 33, 1031} {
			for _, nanAt := range []int{-1, 0, n - 1, n / 2} {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(i)*0.37 - 5
				}
				if nanAt >= 0 {
					src[nanAt] = math.Float32frombits(0xffc00001)
				}
				got := make([]uint16, n+1)
				got[n] = 0xbeef
				ok := ks.F32ToF16Whole(&got[0], &src[0], n)
				if want := n%8 == 0 && nanAt < 0; ok != want {
					t.Fatalf("%s: n %d, NaN at %d: converted %v, want %v", name, n, nanAt, ok, want)
				}
				if got[n] != 0xbeef {
					t.Fatalf("%s: n %d: wrote past the row", name, n)
				}
				if !ok {
					continue
				}
				for i, v := range src {
					if w := ops.F32ToF16(v); got[i] != w {
						t.Fatalf("%s: n %d: element %d (%g) = %#04x, want %#04x", name, n, i, v, got[i], w)
					}
				}
			}
		}
	}
	if (&Kernels{}).F32ToF16Whole(new(uint16), new(float32), 8) {
		t.Fatal("the portable set converted by F16C")
	}
}

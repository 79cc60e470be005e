//go:build goexperiment.simd && amd64

package mulmat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// wantWidened is F16ToF32(h) as VCVTPH2PS gives it: the same bits, but
// for a signalling NaN, which comes out quiet (its payload kept).
func wantWidened(h uint16) uint32 {
	w := math.Float32bits(ops.F16ToF32(h))
	if h&0x7c00 == 0x7c00 && h&0x03ff != 0 {
		w |= 0x00400000
	}
	return w
}

// TestWidenF16F16C checks the VCVTPH2PS widening kernels on all 65536
// halves, bit for bit, over lengths that end mid-group of 16, and that
// they write nothing past n.
func TestWidenF16F16C(t *testing.T) {
	if !host.F16C {
		t.Skip("CPU without F16C")
	}
	const all = 1 << 16
	src := make([]uint16, all)
	for i := range src {
		src[i] = uint16(i*40503 + 7) // a permutation of the halves
	}
	const sentinel = 0x5a5a5a5a
	check := func(name string, got []float32, src []uint16, n int) {
		t.Helper()
		for i := range n {
			if g, w := math.Float32bits(got[i]), wantWidened(src[i]); g != w {
				t.Fatalf("%s: widen(%#04x) = %#08x, want %#08x", name, src[i], g, w)
			}
		}
		for i := n; i < len(got); i++ {
			if math.Float32bits(got[i]) != sentinel {
				t.Fatalf("%s: wrote dst[%d] past n = %d", name, i, n)
			}
		}
	}
	for _, n := range []int{8, 24, 1024, all - 8, all} {
		dst := make([]float32, all+16)
		for i := range dst {
			dst[i] = math.Float32frombits(sentinel)
		}
		widenF16F16C(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n)
		check(fmt.Sprintf("widenF16F16C n=%d", n), dst, src, n)
		// widenF16sVec takes the whole groups of eight of any length.
		for i := range dst {
			dst[i] = math.Float32frombits(sentinel)
		}
		host.widenF16sVec(src[:n-3], dst[:n-3])
		check(fmt.Sprintf("widenF16sVec n=%d", n-3), dst, src, n-8)
	}
}

// TestDotF16F16C4R checks the four-row F16C dot product against the
// archsimd kernel it replaces and against the scalar dotF16Bytes row by
// row, for k with every tail mod 8 and mod 16: bit for bit, but NaN
// results need only both be NaN (with two NaN operands x86 passes on the
// first one's, and the compiler may order a commutative operation's
// operands either way).
func TestDotF16F16C4R(t *testing.T) {
	if !host.F16C {
		t.Skip("CPU without F16C")
	}
	on, off := Host(), Host()
	on.F16Dot, off.F16Dot = true, false
	r := rand.New(rand.NewPCG(41, 42))
	for _, k := range []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 100, 1000, 4096 + 13} {
		for _, special := range []bool{false, true} {
			rows := f16Rows(r, 4, k, special)
			b := opstest.RandF32(r, k)
			if special {
				for i := range b {
					if r.IntN(32) == 0 {
						b[i] = []float32{0, float32(math.Copysign(0, -1)), 1e-40, float32(math.Inf(1)), float32(math.NaN())}[r.IntN(5)]
					}
				}
			}
			got := on.dotF16Vec4R(rows[0], rows[1], rows[2], rows[3], b)
			old := off.dotF16Vec4R(rows[0], rows[1], rows[2], rows[3], b)
			for j := range 4 {
				g, o, w := got[j], old[j], dotF16Bytes(rows[j], b)
				if !(math.IsNaN(float64(g)) && math.IsNaN(float64(o))) && math.Float32bits(g) != math.Float32bits(o) {
					t.Fatalf("k=%d special=%v row %d: F16C %g (%#x), archsimd %g (%#x)", k, special, j, g, math.Float32bits(g), o, math.Float32bits(o))
				}
				if !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) && math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("k=%d special=%v row %d: F16C %g (%#x), scalar %g (%#x)", k, special, j, g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	}
}

// TestMulMatF16F16C runs whole f16 MulMats, one column (the four-row
// kernel) and several (the register tiles, over more than one chunk of
// fTileK16), with the F16C kernels and without: bit-identical (NaN
// results need only both be NaN).
func TestMulMatF16F16C(t *testing.T) {
	if !host.F16C {
		t.Skip("CPU without F16C")
	}
	on, off := Host(), Host()
	on.F16Dot, off.F16Dot = true, false
	r := rand.New(rand.NewPCG(43, 44))
	for _, s := range []struct{ k, m, n int64 }{{37, 9, 1}, {256, 13, 1}, {99, 29, 1}, {4096 + 5, 20, 1}, {int64(fTileK16) + 21, 6, 2}, {136, 11, 3}, {1000, 8, 7}, {2*fTileKF16C + 37, 17, 5}} {
		for _, special := range []bool{false, true} {
			a := rawWeights(r, ops.F16, s.k, s.m)
			if special {
				specialFloatWeights(r, a)
			}
			b := ops.FromF32(ops.F32, []int64{s.k, s.n}, opstest.RandF32(r, int(s.k*s.n)))
			fast, slow := ops.New(ops.F32, s.m, s.n), ops.New(ops.F32, s.m, s.n)
			on.mulMat(fast, a, b, true)
			off.mulMat(slow, a, b, true)
			got, want := fast.ToF32(), slow.ToF32()
			for i := range got {
				g, w := got[i], want[i]
				if !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) && math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("k=%d m=%d n=%d special=%v: dst[%d] = %g (F16C), %g (archsimd)", s.k, s.m, s.n, special, i, g, w)
				}
			}
		}
	}
}

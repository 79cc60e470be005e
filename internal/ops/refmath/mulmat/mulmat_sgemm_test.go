package mulmat

import (
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// fmaExact is x·y + z computed exactly and rounded once to float32 by
// math/big, independently of fmaF32's float64 arithmetic.
func fmaExact(x, y, z float32) float32 {
	bx := new(big.Float).SetPrec(0).SetFloat64(float64(x))
	by := new(big.Float).SetPrec(0).SetFloat64(float64(y))
	bz := new(big.Float).SetPrec(0).SetFloat64(float64(z))
	p := new(big.Float).SetPrec(1000).Mul(bx, by)
	s := new(big.Float).SetPrec(1000).Add(p, bz)
	f, _ := s.Float32()
	return f
}

func TestFMAF32(t *testing.T) { testFMA(t, "fmaF32", fmaF32) }

// TestFMALane checks sgemmDot's multiply-add (fmaF32, or on arm64 the
// x*y + z Go fuses into FMADDS) the same way.
func TestFMALane(t *testing.T) { testFMA(t, "fmaLane", fmaLane) }

func testFMA(t *testing.T, name string, fmaF32 func(x, y, z float32) float32) {
	check := func(x, y, z float32) {
		t.Helper()
		if math.IsInf(float64(x)*float64(y)+float64(z), 0) {
			return // big.Float has no infinities; these do not round
		}
		if got, want := fmaF32(x, y, z), fmaExact(x, y, z); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%s(%g, %g, %g) = %g (%#08x), want %g (%#08x)", name, x, y, z, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	// The double-rounding cases: x·y = 2^-24·(1+δ) with 0 < |δ| < 2^-29,
	// so that 1 + x·y rounds to float64 exactly halfway between 1 and
	// its float32 successor, the exact value on either side of it.
	found := [2]int{}
	for o := 3; o < 1<<20 && (found[0] < 20 || found[1] < 20); o += 2 {
		x := float32(o)
		y := float32(1 / float64(o))
		d := float64(x)*float64(y) - 1
		if d == 0 || math.Abs(d) >= 0x1p-29 {
			continue
		}
		side := 0
		if d > 0 {
			side = 1
		}
		found[side]++
		xs := x * 0x1p-24
		for _, z := range []float32{1, -1, 3, 0x1p20} {
			check(xs*z, y, z)
			check(-xs*z, y, -z)
		}
		// The same at the bottom of the normal range (spacing 2^-148).
		check(xs*0x1p-125, y, 0x1p-125)
	}
	if found[0] == 0 || found[1] == 0 {
		t.Fatalf("found no double-rounding cases (%v)", found)
	}
	// Random operands over wide and over cancelling exponents.
	r := rand.New(rand.NewPCG(61, 62))
	rnd := func(e int) float32 {
		return float32(math.Ldexp(r.Float64()+0.5, r.IntN(2*e+1)-e)) * float32(1-2*r.IntN(2))
	}
	for range 200000 {
		check(rnd(60), rnd(60), rnd(120))
		x, y := rnd(5), rnd(5)
		check(x, y, -float32(float64(x)*float64(y))) // cancellation to the low bits
		check(rnd(70), rnd(70), rnd(149))            // subnormal products and sums
	}
	// Zeros, NaN and infinities pass through as IEEE says.
	inf := float32(math.Inf(1))
	if v := fmaF32(inf, 2, 1); v != inf {
		t.Fatalf("fmaF32(Inf, 2, 1) = %g", v)
	}
	if v := fmaF32(inf, 0, 1); !math.IsNaN(float64(v)) {
		t.Fatalf("fmaF32(Inf, 0, 1) = %g", v)
	}
	if v := fmaF32(0x1p127, 4, -0x1p127); v != inf {
		t.Fatalf("fmaF32(2^127, 4, -2^127) = %g, want +Inf", v)
	}
	if v := fmaF32(math.MaxFloat32, 1, 0x1p103); v != inf {
		t.Fatalf("MaxFloat32 + 2^103 (the tie with 2^128, odd MaxFloat32): %g, want +Inf", v)
	}
	if v := fmaF32(math.MaxFloat32, 1, 0x1p103-0x1p79); v != math.MaxFloat32 {
		t.Fatalf("MaxFloat32 + 2^103 - 2^79 (below the tie): %g, want MaxFloat32", v)
	}
	if v := fmaF32(-1, 0, float32(math.Copysign(0, -1))); math.Float32bits(v) != 0x80000000 {
		t.Fatalf("fmaF32(-1, 0, -0) = %g, want -0", v)
	}
	if v := fmaF32(-1, 0, 0); math.Float32bits(v) != 0 {
		t.Fatalf("fmaF32(-1, 0, 0) = %g, want +0", v)
	}
}

// TestSgemmDotMatchesGGML compares sgemmDot with the MUL_MAT results of
// ggml's CPU backend for shapes it computes by tinyBLAS (testdata/sgemmgen,
// from the prebuilt ../shared/ggml, the AVX-512 build), bit for bit.
func TestSgemmDotMatchesGGML(t *testing.T) {
	want := opstest.ReadF32File(t, filepath.Join("testdata", "sgemm", "sgemm.f32"))
	off := 0
	for ci, in := range sgemmGoldenInputs() {
		c, w, x := sgemmGoldenCases[ci], in[0], in[1]
		rows := make([][]byte, c.m)
		a := ops.FromF32(c.t, []int64{int64(c.k), int64(c.m)}, w)
		for i := range rows {
			rows[i] = a.RowBytes(int64(i), 0, 0)
		}
		bad := 0
		for col := range c.n {
			y := x[col*c.k : (col+1)*c.k]
			if c.t == ops.F16 {
				y = append([]float32(nil), y...)
				for i, v := range y {
					y[i] = ops.RoundF16(v)
				}
			}
			for row := range c.m {
				g := sgemmDot(c.t, rows[row], y)
				if wv := want[off+col*c.m+row]; !opstest.SameBits(g, wv) {
					if bad++; bad <= 5 {
						t.Errorf("%s k=%d m=%d n=%d (%d, %d): et %g (%#08x), ggml %g (%#08x)", c.t, c.k, c.m, c.n, row, col, g, math.Float32bits(g), wv, math.Float32bits(wv))
					}
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%s k=%d m=%d n=%d: %d of %d values differ from ggml's", c.t, c.k, c.m, c.n, bad, c.m*c.n)
		}
		off += c.m * c.n
	}
	if off != len(want) {
		t.Fatalf("golden file has %d values, the cases %d", len(want), off)
	}
}

// sgemmGoldenInputs draws each case's weights and src1 as gen.c does.
func sgemmGoldenInputs() [][2][]float32 {
	s := opstest.GoldenLCG(4242)
	var out [][2][]float32
	for _, c := range sgemmGoldenCases {
		w := make([]float32, c.k*c.m)
		for i := range w {
			w[i] = s.Next() / 8
		}
		x := make([]float32, c.k*c.n)
		for i := range x {
			x[i] = s.Next() / 8
		}
		out = append(out, [2][]float32{w, x})
	}
	return out
}

// sgemmGoldenCases are testdata/sgemmgen/gen.c's: weights [k, m], src1
// [k, n], all values multiples of 1/32768 in [-1, 1).
var sgemmGoldenCases = []struct {
	t       ops.Type
	k, m, n int
}{
	{ops.F32, 4096, 8, 3},
	{ops.F32, 48, 12, 5},
	{ops.F16, 4096, 8, 3},
	{ops.F16, 80, 4, 2},
}

// TestMulMatSgemmMatchesGGML runs the golden cases through the catalog's
// MUL_MAT with each tinyBLAS-order kernel this CPU has (AVX-512 4x4 tiles,
// AVX2+FMA 4x3 tiles, and sgemmDot without either) and compares the results
// bit for bit with ggml's.
func TestMulMatSgemmMatchesGGML(t *testing.T) {
	want := opstest.ReadF32File(t, filepath.Join("testdata", "sgemm", "sgemm.f32"))
	shapes := append([][2]int{{0, 0}}, sgemmShapes()...)
	for _, sh := range shapes {
		ks := Host()
		ks.SgemmR, ks.SgemmC = sh[0], sh[1]
		off := 0
		for ci, in := range sgemmGoldenInputs() {
			c, w, x := sgemmGoldenCases[ci], in[0], in[1]
			a := ops.FromF32(c.t, []int64{int64(c.k), int64(c.m)}, w)
			b := ops.FromF32(ops.F32, []int64{int64(c.k), int64(c.n)}, x)
			got := mustOpWith(t, &ks, ops.OpMulMat, []*ops.Tensor{a, b}, nil).ToF32()
			for i, g := range got {
				if wv := want[off+i]; !opstest.SameBits(g, wv) {
					t.Fatalf("tiles %dx%d, %s k=%d m=%d n=%d value %d: et %g (%#08x), ggml %g (%#08x)", sh[0], sh[1], c.t, c.k, c.m, c.n, i, g, math.Float32bits(g), wv, math.Float32bits(wv))
				}
			}
			off += c.m * c.n
		}
	}
}

// TestSgemmTilesMatchSgemmDot checks every tile kernel against sgemmDot on
// shapes past the golden file's: k over several chunks and not a multiple
// of the chunk, every column count mod 4, rows 4..16, specials.
func TestSgemmTilesMatchSgemmDot(t *testing.T) {
	if host.SgemmR == 0 {
		t.Skip("no tinyBLAS-order tiles on this CPU or build")
	}
	r := rand.New(rand.NewPCG(71, 72))
	for _, sh := range sgemmShapes() {
		ks := Host()
		ks.SgemmR, ks.SgemmC = sh[0], sh[1]
		for _, tt := range []ops.Type{ops.F32, ops.F16} {
			for _, s := range []struct{ k, m, n int }{{16, 4, 2}, {2*fTileK + 48, 12, 5}, {160, 16, 7}, {64, 8, 3}, {32, 20, 4}, {fTileK, 4, 9},
				{fTileK + 32, sgemmRowBlock*2 + 8, sgemmWholeF16 + 4},
				{1072, 8, 3}, {1040, 4, 2}, {48, 4, 2}} { // k chunked, work items of sgemmRowBlock rows and fewer; the AVX2 tiles' blocks of 512 and their last
				w := opstest.RandF32(r, s.k*s.m)
				x := opstest.RandF32(r, s.k*s.n)
				w[3], x[5] = float32(math.Inf(1)), 1e-40 // an infinity, a subnormal
				a := ops.FromF32(tt, []int64{int64(s.k), int64(s.m)}, w)
				b := ops.FromF32(ops.F32, []int64{int64(s.k), int64(s.n)}, x)
				got := mustOpWith(t, &ks, ops.OpMulMat, []*ops.Tensor{a, b}, nil).ToF32()
				for c := range s.n {
					y := b.ToF32()[c*s.k : (c+1)*s.k]
					if tt == ops.F16 {
						for i, v := range y {
							y[i] = ops.RoundF16(v)
						}
					}
					for row := range s.m {
						wv := sgemmDot(tt, a.RowBytes(int64(row), 0, 0), y)
						if g := got[c*s.m+row]; !opstest.SameBits(g, wv) {
							t.Fatalf("tiles %dx%d %s %v (%d, %d): %g (%#08x), sgemmDot %g (%#08x)", sh[0], sh[1], tt, s, row, c, g, math.Float32bits(g), wv, math.Float32bits(wv))
						}
					}
				}
			}
		}
	}
}

// sgemmShapes are the tile shapes (SgemmR, SgemmC) this CPU runs: arm64's
// 2x2; on amd64 the AVX2 tiles' 4x3 (on any CPU with tiles) and AVX-512's
// 4x4.
func sgemmShapes() [][2]int {
	switch {
	case host.SgemmR == 0:
		return nil
	case host.NEON:
		return [][2]int{{2, 2}}
	case host.SgemmC == 4:
		return [][2]int{{4, 3}, {4, 4}}
	}
	return [][2]int{{4, 3}}
}

// TestSgemmOrder checks which shapes take tinyBLAS's order against the
// conditions of ggml_compute_forward_mul_mat and llamafile_sgemm.
func TestSgemmOrder(t *testing.T) {
	f32 := func(ne ...int64) *ops.Tensor { return ops.New(ops.F32, ne...) }
	// src1 [16, 2] as a non-contiguous view: every other row of [16, 4].
	strided, err := ops.View(f32(16, 4), []int64{16, 2}, []uint64{128}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a, b *ops.Tensor
		want bool
	}{
		{"f32 n=2", f32(16, 4), f32(16, 2), true},
		{"f16 weights, f32 src1", ops.New(ops.F16, 32, 8), f32(32, 3), true},
		{"f16 weights, f16 src1", ops.New(ops.F16, 32, 8), ops.New(ops.F16, 32, 3), true},
		{"n=1: ggml_vec_dot", f32(16, 4), f32(16, 1), false},
		{"k % 16 != 0", f32(24, 4), f32(24, 2), false},
		{"m % 4 != 0", f32(16, 6), f32(16, 2), false},
		{"f32, src1 not contiguous", f32(16, 4), strided, false},
		{"f16 weights, f32 src1 not contiguous: converted first", ops.New(ops.F16, 16, 4), strided, true},
		{"f32 weights, f16 src1", f32(16, 4), ops.New(ops.F16, 16, 2), false},
		{"q8_0 weights", ops.New(ops.Q8_0, 32, 4), f32(32, 2), false},
	} {
		if got := sgemmOrder(c.a, c.b); got != c.want {
			t.Errorf("%s: sgemmOrder = %v, want %v", c.name, got, c.want)
		}
	}
}

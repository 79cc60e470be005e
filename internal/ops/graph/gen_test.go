package graph

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// TestBoxMullerMatchesMath: the Box-Muller kernel is Go's math.Log, Sqrt,
// Cos and Sin on the arguments the generator gives them: exactly on
// amd64 below GOAMD64=v3, whose math.Log is the assembly the kernel
// follows and whose compiler fuses nothing (mathUnfused); elsewhere
// (arm64, ppc64le, s390x, riscv64, amd64.v3) math's pure-Go code is
// compiled with fused multiply-adds, and has its own log, so it only
// agrees within a bound that does not depend on the platform's library:
//   - rad = sqrt(-2 ln u1): both are faithful log (under 1 ulp) followed
//     by a correctly rounded sqrt, which halves a relative error; they
//     differ by at most 2 ulps of the result.
//   - cos and sin of x = 2π·u2: the argument x is itself rounded, so it
//     stands for any real within ulp(x)/2 of it, and sin and cos are
//     1-Lipschitz: two results within ulp(x)/2 of each other (plus 2 ulps
//     of the result, for the polynomial's own rounding) are the same
//     function of the same float. Near the zeros of sin and cos this
//     absolute term is what counts (arm64 differs there by up to 4e6
//     ulps of a 2e-7 result, 1e-16 absolutely, under ulp(x)/2 = 1.1e-16);
//     away from them it allows arm64's 4 ulps of 0.5 at x near 5.8,
//     where ulp(x)/2 = 4.4e-16.
func TestBoxMullerMatchesMath(t *testing.T) {
	exact := runtime.GOARCH == "amd64" && mathUnfused
	ulp := func(v float64) float64 {
		v = math.Abs(v)
		return math.Nextafter(v, math.Inf(1)) - v
	}
	check := func(u1, u2 float64) {
		t.Helper()
		rad, c, s := boxMuller(u1, u2)
		x := 2 * math.Pi * u2
		wr := math.Sqrt(-2 * math.Log(u1))
		wc, ws := math.Cos(x), math.Sin(x)
		if exact {
			if math.Float64bits(rad) != math.Float64bits(wr) || math.Float64bits(c) != math.Float64bits(wc) || math.Float64bits(s) != math.Float64bits(ws) {
				t.Fatalf("boxMuller(%v, %v) = %v %v %v, math gives %v %v %v", u1, u2, rad, c, s, wr, wc, ws)
			}
			return
		}
		for _, p := range [][3]float64{{rad, wr, 0}, {c, wc, ulp(x) / 2}, {s, ws, ulp(x) / 2}} {
			if math.Abs(p[0]-p[1]) > p[2]+2*ulp(p[1]) {
				t.Fatalf("boxMuller(%v, %v) = %v %v %v, math gives %v %v %v", u1, u2, rad, c, s, wr, wc, ws)
			}
		}
	}
	// Edges: u1 = 1 and its smallest value, u2 = 0, just below 1, and
	// around every octant boundary.
	for _, u1 := range []float64{1, 0x1p-53, 0.5, math.Sqrt2 / 2, 1 - 0x1p-53, 0.25} {
		for o := 0; o <= 8; o++ {
			b := float64(o) / 8
			for _, d := range []float64{-3, -2, -1, 0, 1, 2, 3} {
				u2 := b + d*0x1p-53
				if u2 >= 0 && u2 < 1 {
					check(u1, u2)
				}
			}
		}
	}
	r := newRNG(1, "boxmuller")
	for range 1 << 20 {
		check(1-r.float(), r.float())
	}
}

// TestFillMatchesGenerator: any range of a leaf's values, filled on its
// own, is the same slice of the one sequential stream.
func TestFillMatchesGenerator(t *testing.T) {
	for _, init := range []string{"uniform(-1, 1)", "uniform(0.5, 1.5)", "normal(0, 1)", "normal(3, 0.02)", "randint(-5, 9)", "arange(2, 0.5)", "zeros", "ones"} {
		in, err := ParseInit(init)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1000
		g := newGenerator(in, 9, "t", n)
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(g.next())
		}
		s := newRNG(9, "t").s
		for _, r := range [][2]int{{0, n}, {0, 1}, {1, 2}, {1, 4}, {3, 10}, {7, 8}, {500, 999}, {999, 1000}, {2, 2}} {
			got := make([]float32, r[1]-r[0])
			fillF32(in, s, int64(r[0]), got)
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want[r[0]+k]) {
					t.Fatalf("%s: value %d of range %v = %v, sequential stream has %v", init, r[0]+k, r, got[k], want[r[0]+k])
				}
			}
		}
	}
}

// TestMaterializeWorkers: the bytes of a leaf large enough to be split
// over goroutines do not depend on GOMAXPROCS, and equal the sequential
// generator's values quantized row by row.
func TestMaterializeWorkers(t *testing.T) {
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0} {
		ne := []int64{96, 1500}
		old := runtime.GOMAXPROCS(1)
		one := materializeOneLeaf(t, 5, "w", typ, ne, "normal(0, 0.5)")
		runtime.GOMAXPROCS(4)
		four := materializeOneLeaf(t, 5, "w", typ, ne, "normal(0, 0.5)")
		runtime.GOMAXPROCS(old)
		if !bytes.Equal(one.Buf, four.Buf) {
			t.Errorf("%s: 1 and 4 workers gave different bytes", typ)
		}
		in, _ := ParseInit("normal(0, 0.5)")
		g := newGenerator(in, 5, "w", ne[0])
		vals := make([]float32, ne[0]*ne[1])
		for i := range vals {
			vals[i] = float32(g.next())
		}
		if want := ops.FromF32(typ, ne, vals); !bytes.Equal(one.Buf, want.Buf) {
			t.Errorf("%s: parallel fill differs from the sequential stream", typ)
		}
	}
}

func TestMaterializeContextCanceled(t *testing.T) {
	in, _ := ParseInit("normal(0, 1)")
	c := &Case{Tensors: []TensorSpec{{Name: "w", Type: ops.Q8_0, Ne: []int64{4096, 64}, Init: in}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MaterializeContext(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestFillNormalMatchesGenerator: a long run of normal values, through
// each vector kernel the build and CPU have (AVX-512, AVX2) and the
// scalar code, equals the sequential generator's, from every start
// offset modulo a pass and for lengths that leave scalar tails.
func TestFillNormalMatchesGenerator(t *testing.T) {
	in, _ := ParseInit("normal(-0.25, 1.5)")
	const n = 1 << 18
	g := newGenerator(in, 11, "v", n)
	want := make([]float32, n)
	for i := range want {
		want[i] = float32(g.next())
	}
	s := newRNG(11, "v").s
	for _, pairs := range normalKernels() {
		for _, r := range [][2]int{{0, n}, {1, n}, {3, 40}, {2, 35}, {5, 21}, {16, 16 + 15}, {7, 7 + 9}} {
			got := make([]float32, r[1]-r[0])
			fillF32With(pairs, in, s, int64(r[0]), got)
			for k := range got {
				if w := want[r[0]+k]; math.Float32bits(got[k]) != math.Float32bits(w) {
					t.Fatalf("%d pairs per pass, range %v: value %d = %v, sequential generator %v", pairs, r, r[0]+k, got[k], w)
				}
			}
		}
	}
}

// unsplitmix inverts splitmix: the state whose draw is d.
func unsplitmix(d uint64) uint64 {
	unxorshift := func(y uint64, k uint) uint64 {
		x := y
		for range 64 / k {
			x = y ^ x>>k
		}
		return x
	}
	inv := func(m uint64) uint64 { // m·inv = 1 mod 2^64, by Newton's iteration
		x := m
		for range 6 {
			x *= 2 - m*x
		}
		return x
	}
	z := unxorshift(d, 31) * inv(0x94d049bb133111eb)
	z = unxorshift(z, 27) * inv(0xbf58476d1ce4e5b9)
	return unxorshift(z, 30)
}

// TestFillNormalKernelEdges: the vector kernels give the scalar code's
// values (which TestBoxMullerMatchesMath checks against math) where
// Box-Muller has its edges, in every lane: u1 = 1, its smallest value,
// √2/2 (where logUnit's reduction switches) and neighbours; u2 = 0, just
// below 1 (where x·4/π rounds up to 8) and around every octant boundary.
// The rng state is chosen so that the one draw of a pair is the edge (u1
// and u2 come from separate draws and separate code).
func TestFillNormalKernelEdges(t *testing.T) {
	if d := uint64(0x1234_5678_9abc_def0); splitmix(unsplitmix(d)) != d {
		t.Fatal("unsplitmix does not invert splitmix")
	}
	var u1s, u2s []float64
	for _, u1 := range []float64{1, 0x1p-53, 0.5, math.Sqrt2 / 2, 1 - 0x1p-53, 0.25, 0.75} {
		for d := -2.0; d <= 2; d++ {
			if u := u1 + d*0x1p-53; u > 0 && u <= 1 {
				u1s = append(u1s, u)
			}
		}
	}
	for o := 0; o <= 8; o++ {
		for d := -3.0; d <= 3; d++ {
			if u := float64(o)/8 + d*0x1p-53; u >= 0 && u < 1 {
				u2s = append(u2s, u)
			}
		}
	}
	in, _ := ParseInit("normal(0.5, 3)")
	check := func(s uint64, what string, u float64) {
		t.Helper()
		want := make([]float32, 32)
		fillF32With(0, in, s, 0, want)
		for _, pairs := range normalKernels() {
			got := make([]float32, 32)
			fillF32With(pairs, in, s, 0, got)
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
					t.Fatalf("%s = %v: %d pairs per pass, value %d = %v, scalar %v", what, u, pairs, k, got[k], want[k])
				}
			}
		}
	}
	for p := range uint64(8) { // the pair, so every lane of both kernels
		for _, u := range u1s {
			// u1 = 1 - unit(draw 2p+1), unit(z) = (z>>11)·2^-53.
			d := uint64((1-u)*0x1p53) << 11
			check(unsplitmix(d)-(2*p+1)*splitmixGamma, "u1", u)
		}
		for _, u := range u2s {
			d := uint64(u*0x1p53) << 11
			check(unsplitmix(d)-(2*p+2)*splitmixGamma, "u2", u)
		}
	}
}

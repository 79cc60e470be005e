package refmath

import (
	"math"
	"math/rand"
	"testing"

	"github.com/ainekko/et/internal/ops/codec"

	"github.com/ainekko/et/internal/ops"
)

// rowVals is n random float32 values in [-4, 4) with, when n allows, the
// special values every kernel must pass through unchanged in kind.
func rowVals(seed int64, n int) []float32 {
	v := randVals(seed, n, -4, 4)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, 65504, 65520, -70000, 1e30, 5.96e-8, -2.98e-8}
	for i, s := range special {
		if 3*i < n {
			v[3*i] = s
		}
	}
	return v
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestRowKernelsMatchScalar checks the element-wise kernels (vector code
// in simd builds) bit for bit against their scalar definitions, at lengths
// that exercise the eight-lane body and the scalar tail.
func TestRowKernelsMatchScalar(t *testing.T) {
	t.Logf("vector kernels: %v", host.Row)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 67, 4096, 4099} {
		a, b := rowVals(int64(n), n), rowVals(int64(n)+1000, n)
		check := func(name string, got, want []float32) {
			t.Helper()
			for i := range want {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("%s n=%d element %d (a %g, b %g): got %g, want %g", name, n, i, a[i], b[i], got[i], want[i])
				}
			}
		}
		two := func(name string, vec, ref func(dst, a, b []float32)) {
			got, want := make([]float32, n), make([]float32, n)
			vec(got, a, b)
			ref(want, a, b)
			check(name, got, want)
			copy(got, a) // in place: dst is a
			vec(got, got, b)
			check(name+" in place", got, want)
		}
		two("add", host.addRow, addScalar)
		two("sub", host.subRow, subScalar)
		two("mul", host.mulRow, mulScalar)
		got, want := make([]float32, n), make([]float32, n)
		host.scaleInto(got, a, 0.37)
		scaleScalar(want, a, 0.37)
		check("scale", got, want)
		sv, ss := host.centerSumSqRow(got, a, 0.25), centerSumSqScalar(want, a, 0.25)
		check("center", got, want)
		if !(sv == ss || math.Abs(sv-ss) <= 1e-12*math.Abs(ss) || (math.IsNaN(sv) && math.IsNaN(ss))) {
			t.Errorf("centerSumSq n=%d: %g, scalar %g", n, sv, ss)
		}
		if n >= 1 {
			h := n / 2
			if h > 0 {
				c, s := a[:h], b[:h]
				x := rowVals(int64(n)+7, 2*h)
				got, want := make([]float32, 2*h), make([]float32, 2*h)
				host.ropeNeoxRow(got, x, c, s)
				ropeNeoxScalar(want, x, c, s)
				check("rope neox", got, want)
				// normal mode against the pair formula written out here
				cc, ss := make([]float32, 2*h), make([]float32, 2*h)
				ropeExpand(cc, ss, c, s)
				host.ropeNormalRow(got, x, cc, ss)
				for i := 0; i < h; i++ {
					x0, x1 := x[2*i], x[2*i+1]
					want[2*i] = float32(x0*c[i]) - float32(x1*s[i])
					want[2*i+1] = float32(x0*s[i]) + float32(x1*c[i])
				}
				check("rope normal", got, want)
			}
		}
	}
}

// TestF32ToF16RowVec checks f32ToF16Row bit for bit against F32ToF16 on
// every float32 whose low 13 bits are a rounding case (0, 1, tie - 1, tie,
// tie + 1, 0x1fff) for every sign, exponent and top-10-bit mantissa, which
// covers every half result, the overflow to inf, subnormals and NaN, plus
// a strided sweep of all bit patterns.
func TestF32ToF16RowVec(t *testing.T) {
	checkF32ToF16Row(t, "f32ToF16Row", host.f32ToF16Row)
}

// f16RoundingCases are TestF32ToF16RowVec's inputs.
func f16RoundingCases() []float32 {
	var src []float32
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff} {
			src = append(src, math.Float32frombits(hi<<13|lo))
		}
	}
	for b := uint64(0); b < 1<<32; b += 65521 {
		src = append(src, math.Float32frombits(uint32(b)))
	}
	return append(src, 1, 2, 3) // a scalar tail
}

// checkF32ToF16Row checks f on f16RoundingCases bit for bit against
// F32ToF16.
func checkF32ToF16Row(t *testing.T, name string, f func(dst []uint16, src []float32)) {
	t.Helper()
	src := f16RoundingCases()
	got := make([]uint16, len(src))
	f(got, src)
	for i, v := range src {
		if w := ops.F32ToF16(v); got[i] != w {
			t.Fatalf("%s(%#08x = %g) = %#04x, want %#04x", name, math.Float32bits(v), v, got[i], w)
		}
	}
}

// TestNormSumsFloat64 checks the float64 sums of the norms (lane-wise
// partial sums in the vector code) against an independent sum in
// extended precision (float64 with Neumaier compensation over the exact
// float32 squares): the relative error must be within a few float64 ulps.
func TestNormSumsFloat64(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{1, 8, 13, 64, 4096, 14336, 4101} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp(3*r.NormFloat64()))
		}
		neumaier := func(term func(v float32) float64) (float64, float64) {
			var s, c, abs float64
			for _, v := range x {
				y := term(v)
				t := s + y
				if math.Abs(s) >= math.Abs(y) {
					c += (s - t) + y
				} else {
					c += (y - t) + s
				}
				s = t
				abs += math.Abs(y)
			}
			return s + c, abs
		}
		wantSq, absSq := neumaier(func(v float32) float64 { return float64(v * v) })
		wantS, absS := neumaier(func(v float32) float64 { return float64(v) })
		tol := func(abs float64) float64 { return 4 * float64(n) * 0x1p-53 * abs }
		if got := host.sumSqRow(x); math.Abs(got-wantSq) > tol(absSq) {
			t.Errorf("sumSqRow n=%d = %.17g, want %.17g", n, got, wantSq)
		}
		if got := host.sumRow(x); math.Abs(got-wantS) > tol(absS) {
			t.Errorf("sumRow n=%d = %.17g, want %.17g", n, got, wantS)
		}
		// The float32 results of rms_norm's mean agree with the in-order sum.
		if a, b := float32(host.sumSqRow(x)/float64(n)), float32(sumSqScalar(x)/float64(n)); a != b {
			d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
			if d < -1 || d > 1 {
				t.Errorf("rms mean n=%d: %g, in order %g", n, a, b)
			}
		}
	}
}

// TestDequantQ8_0RowVec checks the q8_0 row dequantizer against the scalar
// one, bit for bit, on a row whose last block ends the buffer.
func TestDequantQ8_0RowVec(t *testing.T) {
	for _, nb := range []int{1, 2, 3, 128} {
		v := rowVals(int64(nb), nb*codec.QK8_0)
		for i := range v {
			if math.IsInf(float64(v[i]), 0) || v[i] != v[i] || math.Abs(float64(v[i])) > 1e4 {
				v[i] = 0.25
			}
		}
		q := make([]byte, nb*34)
		ops.QuantizeRow(ops.Q8_0, v, q)
		got, want := make([]float32, len(v)), make([]float32, len(v))
		host.dequantQ8_0Row(q, got)
		dequantQ8_0Scalar(q, want)
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("blocks %d element %d: got %g, want %g", nb, i, got[i], want[i])
			}
		}
		ops.DequantizeRow(ops.Q8_0, q, want)
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("blocks %d element %d: got %g, DequantizeRow %g", nb, i, got[i], want[i])
			}
		}
	}
}

// TestSincosIsSinCos checks that math.Sincos, which ropeYarn calls, gives
// exactly math.Sin and math.Cos on float32 angles of every magnitude.
func TestSincosIsSinCos(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 300000; i++ {
		x := float64(math.Float32frombits(r.Uint32()))
		if i%2 == 0 {
			x = float64(float32(r.Float64() * 8192))
		}
		s, c := math.Sincos(x)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if s != math.Sin(x) || c != math.Cos(x) {
			t.Fatalf("Sincos(%g) = %g, %g; Sin, Cos = %g, %g", x, s, c, math.Sin(x), math.Cos(x))
		}
	}
}

// TestEltwiseLongRows runs unary and glu (split and single-tensor forms)
// on f32 rows longer than eltChunk, which are split into pieces across
// workers, and checks every element against the op's scalar function
// (silu's and swiglu's are ggml's split of a row: siluGGML on the first
// n0&^15 values, siluF32 after, see silu.go), bit for bit.
func TestEltwiseLongRows(t *testing.T) {
	const n0, rows = 2*eltChunk + 904, 3
	a := ops.FromF32(ops.F32, []int64{n0, rows}, randVals(21, n0*rows, -9, 9))
	b := ops.FromF32(ops.F32, []int64{n0, rows}, randVals(22, n0*rows, -3, 3))
	x2 := ops.FromF32(ops.F32, []int64{2 * n0, rows}, randVals(23, 2*n0*rows, -9, 9))
	near := func(what string, i int, got, want float32) {
		t.Helper()
		if !sameBits(got, want) {
			t.Fatalf("%s element %d: got %g, want %g", what, i, got, want)
		}
	}
	// The scalar function of element i of a row of n0 values.
	unary := func(op string, i int) func(float32) float32 {
		if op == "silu" && i%n0 < n0&^(siluBlock-1) {
			return siluGGML
		}
		return UnaryFunc(op)
	}
	glu := func(op string, i int) func(a, b float32) float32 {
		if op == "swiglu" && i%n0 < n0&^(siluBlock-1) {
			return func(a, b float32) float32 { return siluGGML(a) * b }
		}
		return GLUFunc(op, 0, 0)
	}
	run := func(op string, srcs []*ops.Tensor, params map[string]any) []float32 {
		info, _ := ops.Lookup(op)
		p, err := info.Normalize(params)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := Compute(info, srcs, p)
		if err != nil {
			t.Fatal(err)
		}
		return dst.ToF32()
	}
	av, bv, xv := a.ToF32(), b.ToF32(), x2.ToF32()
	for _, op := range []string{"silu", "tanh", "relu"} {
		for i, g := range run("unary", []*ops.Tensor{a}, map[string]any{"op": op}) {
			near("unary "+op, i, g, unary(op, i)(av[i]))
		}
	}
	for _, op := range []string{"swiglu", "reglu"} {
		for i, g := range run("glu", []*ops.Tensor{a, b}, map[string]any{"op": op}) {
			near("glu split "+op, i, g, glu(op, i)(av[i], bv[i]))
		}
		for _, swapped := range []bool{false, true} {
			got := run("glu", []*ops.Tensor{x2}, map[string]any{"op": op, "swapped": swapped})
			for i, g := range got {
				r, c := i/n0, i%n0
				u, v := xv[r*2*n0+c], xv[r*2*n0+n0+c]
				if swapped {
					u, v = v, u
				}
				near("glu single "+op, i, g, glu(op, i)(u, v))
			}
		}
	}
}

// TestContPermuted4D copies permuted 4-D views large enough to be split
// into parallel chunks (copyRaw steps its row indices within a chunk) and
// checks every element against the view's own accessor.
func TestContPermuted4D(t *testing.T) {
	src := ops.FromF32(ops.F32, []int64{64, 6, 10, 14}, randVals(31, 64*6*10*14, -1, 1)) // 840 rows: over refParallel's grain of 512
	info, _ := ops.Lookup("cont")
	p, err := info.Normalize(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ax := range [][4]int{{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}, {1, 0, 2, 3}} {
		v, err := ops.Permute(src, ax[0], ax[1], ax[2], ax[3])
		if err != nil {
			t.Fatal(err)
		}
		dst, err := Compute(info, []*ops.Tensor{v}, p)
		if err != nil {
			t.Fatal(err)
		}
		v.ForEach(func(i0, i1, i2, i3 int64) {
			if g, w := dst.F32(i0, i1, i2, i3), v.F32(i0, i1, i2, i3); g != w {
				t.Fatalf("axes %v element (%d, %d, %d, %d): got %g, want %g", ax, i0, i1, i2, i3, g, w)
			}
		})
	}
}

// TestSincosRowVec checks sincosRow bit for bit against math.Sincos (hence
// math.Sin and math.Cos) on float32 angles from 0 to 2^29, negative
// ones, zeros and multiples of π/4, and that it declines angles it cannot
// take.
func TestSincosRowVec(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	var th []float32
	for i := 0; i < 400000; i++ {
		var v float32
		switch i % 4 {
		case 0:
			v = float32(r.Float64() * 8192)
		case 1:
			v = float32((r.Float64() - 0.5) * 20)
		case 2:
			v = float32(math.Ldexp(r.Float64(), r.Intn(58)-29)) // tiny to 2^29
		default:
			v = float32(float64(r.Intn(1<<20)) * math.Pi / 4)
		}
		th = append(th, v)
	}
	th = append(th, 0, float32(math.Copysign(0, -1)), 1<<29-64, -(1<<29 - 64), 1e-30, 3)
	for _, m := range []float32{1, 0.7071} {
		c, s := make([]float32, len(th)), make([]float32, len(th))
		if !host.sincosRow(c, s, th, m) {
			t.Skip("no vector sincos in this build or on this CPU")
		}
		for i, v := range th {
			sn, cs := math.Sincos(float64(v))
			if wc, ws := float32(cs)*m, float32(sn)*m; !sameBits(c[i], wc) || !sameBits(s[i], ws) {
				t.Fatalf("angle %g (·%g): cos %g sin %g, want %g %g", v, m, c[i], s[i], wc, ws)
			}
		}
	}
	for _, bad := range []float32{1 << 29, float32(math.Inf(1)), float32(math.NaN())} {
		x := []float32{1, 2, 3, bad, 5}
		if host.sincosRow(make([]float32, 5), make([]float32, 5), x, 1) {
			t.Errorf("sincosRow took angle %g", bad)
		}
	}
}

// TestRopeFastPathMatchesGeneric runs rope on dense f32 rows (ropeF32: row
// views, vector rotation and, without YaRN, vector sin/cos) and on a
// strided copy of the same values (the generic per-row path) and wants the
// same bits, for both modes, with and without freq_factors, YaRN and an
// offset window, in place too, for a launch on the calling goroutine (9
// tokens) and one split over workers (300 tokens), with positions 0,
// negative and beyond 2^29 (where the vector sin/cos declines).
func TestRopeFastPathMatchesGeneric(t *testing.T) {
	const hd, heads = 96, 4
	for _, toks := range []int64{9, 300} {
		ropeFastVsGeneric(t, hd, heads, toks)
	}
}

func ropeFastVsGeneric(t *testing.T, hd, heads, toks int64) {
	x := ops.FromF32(ops.F32, []int64{hd, heads, toks}, randVals(51, int(hd*heads*toks), -2, 2))
	xs := permutedCopy(t, x)
	pos := make([]int64, toks)
	for i := range pos {
		pos[i] = int64(i*977 + 3)
	}
	pos[1], pos[2], pos[3] = 0, -5000, 1<<30+7
	posT := ops.FromInts(ops.I32, []int64{toks}, pos)
	ff := ops.FromF32(ops.F32, []int64{hd / 2}, randVals(52, int(hd/2), 0.5, 4))
	info, _ := ops.Lookup("rope")
	for _, mode := range []string{"neox", "normal"} {
		for _, c := range []map[string]any{
			{"n_dims": hd, "freq_base": 500000},
			{"n_dims": 64, "n_offs": 16, "freq_base": 10000, "freq_scale": 0.25, "attn_factor": 1.3},
			{"n_dims": hd, "freq_base": 10000, "ext_factor": 1, "freq_scale": 0.5, "n_ctx_orig": 4096},
			{"n_dims": hd, "freq_base": 10000, "ff": true},
		} {
			params := map[string]any{"mode": mode}
			srcs, srcsS := []*ops.Tensor{x, posT}, []*ops.Tensor{xs, posT}
			for k, v := range c {
				if k == "ff" {
					srcs, srcsS = append(srcs, ff), append(srcsS, ff)
					continue
				}
				params[k] = v
			}
			p, err := info.Normalize(params)
			if err != nil {
				t.Fatal(err)
			}
			fast, err := Compute(info, srcs, p)
			if err != nil {
				t.Fatal(err)
			}
			gen, err := Compute(info, srcsS, p)
			if err != nil {
				t.Fatal(err)
			}
			inPlace := ops.FromF32(ops.F32, x.Ne[:3], x.ToF32())
			if err := Run(info, inPlace, append([]*ops.Tensor{inPlace}, srcs[1:]...), p); err != nil {
				t.Fatal(err)
			}
			fv, gv, iv := fast.ToF32(), gen.ToF32(), inPlace.ToF32()
			for i := range fv {
				if !sameBits(fv[i], gv[i]) || !sameBits(iv[i], gv[i]) {
					t.Fatalf("%d tokens, %s %v element %d: fast path %g (in place %g), generic %g", toks, mode, c, i, fv[i], iv[i], gv[i])
				}
			}
		}
	}
}

// TestSumsLaneOrder checks the norms' sums with the vector code (the
// archsimd kernels of the simd build, the assembly of the plain one) bit
// for bit against their order written out here: four float64 partial sums
// of the values 16j + 0..3, 4..7, 8..11, 12..15 (a last group of eight
// into the first two), added lane-wise as (a+b) + (c+d), then
// (l0+l1) + (l2+l3), then the last len%8 values in order. So both builds
// give the same bits.
func TestSumsLaneOrder(t *testing.T) {
	if !host.Row {
		t.Skip("no vector row kernels in this build or on this CPU")
	}
	laneSum := func(x []float32, f func(float32) float64) float64 {
		n := len(x) &^ 7
		var acc [4][4]float64
		i := 0
		for ; i+16 <= n; i += 16 {
			for j := range 16 {
				acc[j/4][j%4] += f(x[i+j])
			}
		}
		if i < n {
			for j := range 8 {
				acc[j/4][j%4] += f(x[i+j])
			}
		}
		var v [4]float64
		for l := range v {
			v[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
		}
		s := (v[0] + v[1]) + (v[2] + v[3])
		for _, y := range x[n:] {
			s += f(y)
		}
		return s
	}
	for _, n := range []int{8, 15, 16, 24, 40, 4096, 4099} {
		x := rowVals(int64(n)+31, n)
		for i := range x {
			if math.IsInf(float64(x[i]), 0) || x[i] != x[i] {
				x[i] = 1.5
			}
		}
		const m = 0.25
		if got, want := host.sumRow(x), laneSum(x, func(v float32) float64 { return float64(v) }); got != want {
			t.Errorf("sumRow n=%d = %.17g, want %.17g", n, got, want)
		}
		if got, want := host.sumSqRow(x), laneSum(x, func(v float32) float64 { return float64(v * v) }); got != want {
			t.Errorf("sumSqRow n=%d = %.17g, want %.17g", n, got, want)
		}
		d := make([]float32, n)
		if got, want := host.centerSumSqRow(d, x, m), laneSum(x, func(v float32) float64 { d := v - m; return float64(d * d) }); got != want {
			t.Errorf("centerSumSqRow n=%d = %.17g, want %.17g", n, got, want)
		}
	}
}

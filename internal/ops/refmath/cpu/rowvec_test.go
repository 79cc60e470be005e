package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestRowKernelsMatchScalar checks the element-wise kernels (vector code
// in simd builds) bit for bit against their scalar definitions, at lengths
// that exercise the 32-value steps (add, sub, mul), the eight-lane body
// and the scalar tail.
func TestRowKernelsMatchScalar(t *testing.T) {
	t.Logf("vector kernels: %v", host.Row)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 40, 59, 64, 67, 95, 4096, 4099, 4125} {
		a, b := opstest.RowVals(int64(n), n), opstest.RowVals(int64(n)+1000, n)
		check := func(name string, got, want []float32) {
			t.Helper()
			for i := range want {
				if !opstest.SameBits(got[i], want[i]) {
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
		two("add", host.AddRow, addScalar)
		two("sub", host.SubRow, subScalar)
		two("mul", host.MulRow, mulScalar)
		got, want := make([]float32, n), make([]float32, n)
		host.ScaleInto(got, a, 0.37)
		scaleScalar(want, a, 0.37)
		check("scale", got, want)
		sv, ss := host.CenterSumSqRow(got, a, 0.25), CenterSumSqScalar(want, a, 0.25)
		check("center", got, want)
		if !(sv == ss || math.Abs(sv-ss) <= 1e-12*math.Abs(ss) || (math.IsNaN(sv) && math.IsNaN(ss))) {
			t.Errorf("centerSumSq n=%d: %g, scalar %g", n, sv, ss)
		}
		if n >= 1 {
			h := n / 2
			if h > 0 {
				c, s := a[:h], b[:h]
				x := opstest.RowVals(int64(n)+7, 2*h)
				got, want := make([]float32, 2*h), make([]float32, 2*h)
				host.RopeNeoxRow(got, x, c, s)
				ropeNeoxScalar(want, x, c, s)
				check("rope neox", got, want)
				// normal mode against the pair formula written out here
				cc, ss := make([]float32, 2*h), make([]float32, 2*h)
				RopeExpand(cc, ss, c, s)
				host.RopeNormalRow(got, x, cc, ss)
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
	checkF32ToF16Row(t, "f32ToF16Row", host.F32ToF16Row)
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
		if got := host.SumSqRow(x); math.Abs(got-wantSq) > tol(absSq) {
			t.Errorf("sumSqRow n=%d = %.17g, want %.17g", n, got, wantSq)
		}
		if got := host.SumRow(x); math.Abs(got-wantS) > tol(absS) {
			t.Errorf("sumRow n=%d = %.17g, want %.17g", n, got, wantS)
		}
		// The float32 results of rms_norm's mean agree with the in-order sum.
		if a, b := float32(host.SumSqRow(x)/float64(n)), float32(SumSqScalar(x)/float64(n)); a != b {
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
		v := opstest.RowVals(int64(nb), nb*codec.QK8_0)
		for i := range v {
			if math.IsInf(float64(v[i]), 0) || v[i] != v[i] || math.Abs(float64(v[i])) > 1e4 {
				v[i] = 0.25
			}
		}
		q := make([]byte, nb*34)
		ops.QuantizeRow(ops.Q8_0, v, q)
		got, want := make([]float32, len(v)), make([]float32, len(v))
		host.DequantQ8_0Row(q, got)
		dequantQ8_0Scalar(q, want)
		for i := range want {
			if !opstest.SameBits(got[i], want[i]) {
				t.Fatalf("blocks %d element %d: got %g, want %g", nb, i, got[i], want[i])
			}
		}
		ops.DequantizeRow(ops.Q8_0, q, want)
		for i := range want {
			if !opstest.SameBits(got[i], want[i]) {
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
		if !host.SincosRow(c, s, th, m) {
			t.Skip("no vector sincos in this build or on this CPU")
		}
		for i, v := range th {
			sn, cs := math.Sincos(float64(v))
			if wc, ws := float32(cs)*m, float32(sn)*m; !opstest.SameBits(c[i], wc) || !opstest.SameBits(s[i], ws) {
				t.Fatalf("angle %g (·%g): cos %g sin %g, want %g %g", v, m, c[i], s[i], wc, ws)
			}
		}
	}
	for _, bad := range []float32{1 << 29, float32(math.Inf(1)), float32(math.NaN())} {
		x := []float32{1, 2, 3, bad, 5}
		if host.SincosRow(make([]float32, 5), make([]float32, 5), x, 1) {
			t.Errorf("sincosRow took angle %g", bad)
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
		x := opstest.RowVals(int64(n)+31, n)
		for i := range x {
			if math.IsInf(float64(x[i]), 0) || x[i] != x[i] {
				x[i] = 1.5
			}
		}
		const m = 0.25
		if got, want := host.SumRow(x), laneSum(x, func(v float32) float64 { return float64(v) }); got != want {
			t.Errorf("sumRow n=%d = %.17g, want %.17g", n, got, want)
		}
		if got, want := host.SumSqRow(x), laneSum(x, func(v float32) float64 { return float64(v * v) }); got != want {
			t.Errorf("sumSqRow n=%d = %.17g, want %.17g", n, got, want)
		}
		d := make([]float32, n)
		if got, want := host.CenterSumSqRow(d, x, m), laneSum(x, func(v float32) float64 { d := v - m; return float64(d * d) }); got != want {
			t.Errorf("centerSumSqRow n=%d = %.17g, want %.17g", n, got, want)
		}
	}
}

// BenchmarkEltRow runs the element-wise row kernels alone, without the
// op's dispatch or split (see BenchmarkRowOps for whole ops): one row of
// 2048 (three operands in L1) and one core's share of ADD and MUL at
// llama-3-8B's n = 32 (16 rows of 4096, 256 KB an operand: in L2 from
// one call to the next).
func BenchmarkEltRow(b *testing.B) {
	for _, shape := range []struct{ n0, rows int }{{2048, 1}, {4096, 16}} {
		n := shape.n0 * shape.rows
		x, y := opstest.RandVals(41, n, -1, 1), opstest.RandVals(42, n, -1, 1)
		dst := make([]float32, n)
		for _, c := range []struct {
			name string
			kern func(ks *Kernels, dst, a, b []float32)
		}{{"add", (*Kernels).AddRow}, {"mul", (*Kernels).MulRow}} {
			b.Run(fmt.Sprintf("%s/%dx%d", c.name, shape.n0, shape.rows), func(b *testing.B) {
				for b.Loop() {
					for r := 0; r < n; r += shape.n0 {
						c.kern(host, dst[r:r+shape.n0], x[r:r+shape.n0], y[r:r+shape.n0])
					}
				}
			})
		}
	}
}

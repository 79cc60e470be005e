package mulmat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/opstest"
)

// naiveMulMat is the textbook definition in float64 over elements read
// through the accessors: dst[i0,i1,i2,i3] = Σ_k a[k,i0,i2/r2,i3/r3]·bv[k,i1,i2,i3],
// where bv(k, i1, i2, i3) supplies b's values (possibly pre-rounded).
func naiveMulMat(a *ops.Tensor, b *ops.Tensor, bv func(row []float32) []float32) []float32 {
	m, n, ne2, ne3 := a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]
	r2, r3 := ne2/a.Ne[2], ne3/a.Ne[3]
	k := a.Ne[0]
	out := make([]float32, m*n*ne2*ne3)
	arow := make([]float32, k)
	brow := make([]float32, k)
	for i3 := int64(0); i3 < ne3; i3++ {
		for i2 := int64(0); i2 < ne2; i2++ {
			for i1 := int64(0); i1 < n; i1++ {
				b.Row(i1, i2, i3, brow)
				bq := bv(brow)
				for i0 := int64(0); i0 < m; i0++ {
					a.Row(i0, i2/r2, i3/r3, arow)
					var s float64
					for j := range arow {
						s += float64(arow[j]) * float64(bq[j])
					}
					out[i0+m*(i1+n*(i2+ne2*i3))] = float32(s)
				}
			}
		}
	}
	return out
}

func identity(x []float32) []float32 { return x }

// viaQ8_0 and viaQ8K round b the way the CPU's activation quantizers do.
func viaQ8_0(x []float32) []float32 { return ops.FromF32(ops.Q8_0, []int64{int64(len(x))}, x).ToF32() }

func viaF16(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = ops.RoundF16(v)
	}
	return y
}

func viaQ8K(x []float32) []float32 {
	k := len(x)
	q := make([]int8, k)
	d := make([]float32, k/codec.QKK)
	s := make([]int32, k/16)
	quantizeRowQ8_KAct(x, q, d, s)
	y := make([]float32, k)
	for i := range y {
		y[i] = float32(q[i]) * d[i/codec.QKK]
	}
	return y
}

func maxRelErr(got, want []float32) float64 {
	var num, den float64
	for i := range got {
		num = math.Max(num, math.Abs(float64(got[i])-float64(want[i])))
		den = math.Max(den, math.Abs(float64(want[i])))
	}
	return num / den
}

func TestMulMat(t *testing.T) {
	tests := []struct {
		ta, tb     ops.Type
		k, m, n    int64
		a23, b23   [2]int64
		round      func([]float32) []float32
		transposeB bool
	}{
		{ops.F32, ops.F32, 64, 5, 3, [2]int64{1, 1}, [2]int64{1, 1}, identity, false},
		{ops.F32, ops.F32, 33, 7, 4, [2]int64{2, 1}, [2]int64{4, 3}, identity, false},
		{ops.F32, ops.F16, 48, 6, 2, [2]int64{1, 2}, [2]int64{3, 2}, identity, false},
		{ops.F32, ops.F32, 16, 4, 5, [2]int64{1, 1}, [2]int64{2, 1}, identity, true},
		{ops.F16, ops.F32, 40, 9, 3, [2]int64{2, 1}, [2]int64{2, 2}, viaF16, false},
		{ops.F16, ops.F16, 64, 3, 2, [2]int64{1, 1}, [2]int64{1, 1}, viaF16, false},
		{ops.Q8_0, ops.F32, 96, 17, 3, [2]int64{1, 1}, [2]int64{1, 1}, viaQ8_0, false},
		{ops.Q8_0, ops.F32, 64, 4, 2, [2]int64{2, 1}, [2]int64{4, 2}, viaQ8_0, false},
		{ops.Q8_0, ops.F32, 160, 19, 9, [2]int64{1, 1}, [2]int64{1, 1}, viaQ8_0, false},
		{ops.F16, ops.F32, 24, 5, 8, [2]int64{1, 1}, [2]int64{1, 2}, viaF16, true},
		{ops.Q4_K, ops.F16, 256, 4, 6, [2]int64{1, 1}, [2]int64{1, 1}, viaQ8K, false},
		{ops.Q4_0, ops.F32, 128, 33, 5, [2]int64{1, 1}, [2]int64{1, 1}, viaQ8_0, false},
		{ops.Q4_0, ops.F16, 64, 3, 2, [2]int64{1, 2}, [2]int64{1, 4}, viaQ8_0, false},
		{ops.Q4_K, ops.F32, 512, 5, 3, [2]int64{1, 1}, [2]int64{1, 1}, viaQ8K, false},
		{ops.Q4_K, ops.F32, 256, 3, 2, [2]int64{3, 1}, [2]int64{3, 1}, viaQ8K, true},
		// Activations converted a few rows a work item
		// (actChunkValues): two rows of 2048 values, one of 4096.
		{ops.Q8_0, ops.F32, 2048, 8, 3, [2]int64{1, 1}, [2]int64{1, 2}, viaQ8_0, false},
		{ops.F16, ops.F32, 4096, 4, 3, [2]int64{1, 1}, [2]int64{2, 1}, viaF16, false},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		name := fmt.Sprintf("%sx%s/k=%d,m=%d,n=%d,a=%v,b=%v,bT=%v", tt.ta, tt.tb, tt.k, tt.m, tt.n, tt.a23, tt.b23, tt.transposeB)
		t.Run(name, func(t *testing.T) {
			a := ops.FromF32(tt.ta, []int64{tt.k, tt.m, tt.a23[0], tt.a23[1]}, opstest.RandF32(r, int(tt.k*tt.m*tt.a23[0]*tt.a23[1])))
			var b *ops.Tensor
			if tt.transposeB {
				// b stored as [n, k], viewed transposed: strided rows.
				bt := ops.FromF32(tt.tb, []int64{tt.n, tt.k, tt.b23[0], tt.b23[1]}, opstest.RandF32(r, int(tt.k*tt.n*tt.b23[0]*tt.b23[1])))
				b = ops.Transpose(bt)
			} else {
				b = ops.FromF32(tt.tb, []int64{tt.k, tt.n, tt.b23[0], tt.b23[1]}, opstest.RandF32(r, int(tt.k*tt.n*tt.b23[0]*tt.b23[1])))
			}
			dst := ops.New(ops.F32, tt.m, tt.n, tt.b23[0], tt.b23[1])
			if err := host.MulMat(dst, a, b); err != nil {
				t.Fatal(err)
			}
			got := dst.ToF32()
			want := naiveMulMat(a, b, tt.round)
			if e := maxRelErr(got, want); e > 2e-6 {
				t.Errorf("max error relative to max |dst| = %g against the same-rounding reference", e)
			}
			// Against exact f32 math the activation rounding is
			// within test-backend-ops' MUL_MAT limit.
			exact := naiveMulMat(a, b, identity)
			if c := ops.Compare(got, exact, ops.MatMulMaxNMSE); !c.OK() {
				t.Errorf("against unrounded activations: %s", c)
			}
		})
	}
}

func TestMulMatStridedDst(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := ops.FromF32(ops.Q8_0, []int64{64, 6}, opstest.RandF32(r, 64*6))
	b := ops.FromF32(ops.F32, []int64{64, 4}, opstest.RandF32(r, 64*4))
	// dst is the transpose of a [4, 6] buffer: ne [6, 4] with nb0 = 16.
	store := ops.New(ops.F32, 4, 6)
	dst := ops.Transpose(store)
	if err := host.MulMat(dst, a, b); err != nil {
		t.Fatal(err)
	}
	want := naiveMulMat(a, b, viaQ8_0)
	for i1 := int64(0); i1 < 4; i1++ {
		for i0 := int64(0); i0 < 6; i0++ {
			if got, w := store.F32(i1, i0, 0, 0), want[i0+6*i1]; math.Abs(float64(got-w)) > 1e-5 {
				t.Fatalf("dst[%d,%d] = %g, want %g", i0, i1, got, w)
			}
		}
	}
}

// TestMulMatQ8_0Exact pins the integer path: with activations that the
// q8_0 quantizer represents exactly, the result equals the dequantized
// product.
func TestMulMatQ8_0Exact(t *testing.T) {
	k := int64(64)
	a := ops.FromF32(ops.Q8_0, []int64{k, 2}, opstest.Seq(int(2*k), func(i int) float32 { return float32(i%13 - 6) }))
	b := ops.FromF32(ops.F32, []int64{k, 1}, opstest.Seq(int(k), func(i int) float32 { return float32(127 - 8*(i%32)) }))
	dst := ops.New(ops.F32, 2, 1)
	if err := host.MulMat(dst, a, b); err != nil {
		t.Fatal(err)
	}
	want := naiveMulMat(a, b, identity)
	for i, w := range want {
		if got := dst.ToF32()[i]; got != w {
			t.Errorf("dst[%d] = %g, want %g", i, got, w)
		}
	}
}

func TestMulMatErrors(t *testing.T) {
	tests := []struct {
		name    string
		a, b, d *ops.Tensor
		want    string
	}{
		{"k differs", ops.New(ops.F32, 4, 2), ops.New(ops.F32, 5, 1), ops.New(ops.F32, 2, 1), "ne0 differ"},
		{"no broadcast", ops.New(ops.F32, 4, 2, 2), ops.New(ops.F32, 4, 1, 3), ops.New(ops.F32, 2, 1, 3), "not multiples"},
		{"src1 quantized", ops.New(ops.F32, 32, 2), ops.New(ops.Q8_0, 32, 1), ops.New(ops.F32, 2, 1), "src1 type q8_0"},
		{"src0 i32", ops.New(ops.I32, 4, 2), ops.New(ops.F32, 4, 1), ops.New(ops.F32, 2, 1), "src0 type i32"},
		{"dst shape", ops.New(ops.F32, 4, 2), ops.New(ops.F32, 4, 3), ops.New(ops.F32, 2, 1), "dst shape"},
		{"dst type", ops.New(ops.F32, 4, 2), ops.New(ops.F32, 4, 1), ops.New(ops.F16, 2, 1), "dst type f16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := host.MulMat(tt.d, tt.a, tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestQ8KQuantizer(t *testing.T) {
	x := opstest.GoldenInput()[:256]
	q := make([]int8, 256)
	d := make([]float32, 1)
	s := make([]int32, 16)
	quantizeRowQ8_KAct(x, q, d, s)
	// max is -2 (first occurrence of |x| = 2): iscale = 63.5, d = 1/63.5.
	if d[0] != 1/float32(63.5) {
		t.Errorf("d = %g, want %g", d[0], 1/float32(63.5))
	}
	for j := 0; j < 16; j++ {
		var sum int32
		for _, v := range q[16*j : 16*j+16] {
			sum += int32(v)
		}
		if sum != s[j] {
			t.Errorf("bsums[%d] = %d, want %d", j, s[j], sum)
		}
	}
	for i, v := range x {
		if e := math.Abs(float64(float32(q[i])*d[0] - v)); e > 0.5/63.5+1e-6 {
			t.Fatalf("x[%d] = %g quantized to %d (error %g)", i, v, q[i], e)
		}
	}
	quantizeRowQ8_KAct(make([]float32, 256), q, d, s)
	if d[0] != 0 || q[0] != 0 || s[0] != 0 {
		t.Error("all-zero block not zero")
	}
}

// TestSWARDotsExact checks the SWAR kernels against plain integer loops on
// random and extreme raw blocks (weights over their whole byte range,
// activations at ±127), where the lane bounds are tightest.
func TestSWARDotsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const k = 512
	for trial := 0; trial < 200; trial++ {
		q := make([]int8, k)
		for i := range q {
			switch trial % 4 {
			case 0:
				q[i] = int8(r.IntN(255) - 127)
			case 1:
				q[i] = 127
			case 2:
				q[i] = -127
			default:
				q[i] = int8(127 * (1 - 2*(i%2)))
			}
		}
		pk := make([]uint64, k/4)
		packAct(q, pk)
		d := make([]float32, k/32)
		s := make([]int32, k/32)
		for b := range d {
			d[b] = 1
			for _, v := range q[32*b : 32*b+32] {
				s[b] += int32(v)
			}
		}
		fill := func(n int) []byte {
			raw := make([]byte, n)
			for i := range raw {
				switch trial % 3 {
				case 0:
					raw[i] = byte(r.Uint32())
				case 1:
					raw[i] = 0xff
				default:
					raw[i] = 0x80
				}
			}
			return raw
		}
		// q8_0 and q4_0 with d = 1 (0x3c00): the result is the integer sum.
		w8 := fill(k / 32 * 34)
		w4 := fill(k / 32 * 18)
		var want8, want4 int64
		for b := 0; b < k/32; b++ {
			w8[b*34], w8[b*34+1] = 0x00, 0x3c
			w4[b*18], w4[b*18+1] = 0x00, 0x3c
			for j := 0; j < 32; j++ {
				want8 += int64(int8(w8[b*34+2+j])) * int64(q[32*b+j])
			}
			for j := 0; j < 16; j++ {
				want4 += int64(int(w4[b*18+2+j]&0xf)-8) * int64(q[32*b+j])
				want4 += int64(int(w4[b*18+2+j]>>4)-8) * int64(q[32*b+16+j])
			}
		}
		if got := dotQ8_0(w8, pk, d, s); float64(got) != float64(float32(want8)) && math.Abs(float64(got)-float64(want8)) > 1e-3*math.Abs(float64(want8)) {
			t.Fatalf("trial %d: dotQ8_0 = %g, want %d", trial, got, want8)
		}
		if got := dotQ4_0(w4, pk, d, s); math.Abs(float64(got)-float64(want4)) > 1e-3*math.Abs(float64(want4))+1e-3 {
			t.Fatalf("trial %d: dotQ4_0 = %g, want %d", trial, got, want4)
		}
		// Per-block exactness: one block at a time the float sum is exact.
		for b := 0; b < k/32; b++ {
			var w8b, w4b int64
			for j := 0; j < 32; j++ {
				w8b += int64(int8(w8[b*34+2+j])) * int64(q[32*b+j])
			}
			for j := 0; j < 16; j++ {
				w4b += int64(int(w4[b*18+2+j]&0xf)-8)*int64(q[32*b+j]) + int64(int(w4[b*18+2+j]>>4)-8)*int64(q[32*b+16+j])
			}
			if got := dotQ8_0(w8[b*34:(b+1)*34], pk[8*b:8*b+8], d[b:b+1], s[b:b+1]); got != float32(w8b) {
				t.Fatalf("trial %d block %d: dotQ8_0 = %g, want %d", trial, b, got, w8b)
			}
			if got := dotQ4_0(w4[b*18:(b+1)*18], pk[8*b:8*b+8], d[b:b+1], s[b:b+1]); got != float32(w4b) {
				t.Fatalf("trial %d block %d: dotQ4_0 = %g, want %d", trial, b, got, w4b)
			}
			x4 := dotQ4_0Q8_0x4(ops.Q4_0, w4[b*18:(b+1)*18], repeat4(pk[8*b:8*b+8]), repeat4(d[b:b+1]), repeat4(s[b:b+1]))
			x8 := dotQ4_0Q8_0x4(ops.Q8_0, w8[b*34:(b+1)*34], repeat4(pk[8*b:8*b+8]), repeat4(d[b:b+1]), repeat4(s[b:b+1]))
			for c := range 4 {
				if x4[c] != float32(w4b) || x8[c] != float32(w8b) {
					t.Fatalf("trial %d block %d: x4 kernels = %g, %g, want %d, %d", trial, b, x4[c], x8[c], w4b, w8b)
				}
			}
		}
		// q4_K: d = 1, dmin = 0, scales all 1 (sc = 1, m = 0): the sum of
		// nibble·q over the block.
		wk := fill(144)
		wk[0], wk[1], wk[2], wk[3] = 0x00, 0x3c, 0, 0
		for j := 0; j < 4; j++ {
			// scales[j] = 1 (sc of j < 4), scales[4+j] = 0 (m of j < 4),
			// scales[8+j] = 1 (sc of 4+j in the low nibble, m = 0).
			wk[4+j], wk[8+j], wk[12+j] = 1, 0, 1
		}
		var wantK int64
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				wantK += int64(wk[16+32*c+l]&0xf)*int64(q[64*c+l]) + int64(wk[16+32*c+l]>>4)*int64(q[64*c+32+l])
			}
		}
		bs := make([]int32, 16)
		if got := dotQ4_K(wk, pk[:64], []float32{1}, bs); got != float32(wantK) {
			t.Fatalf("trial %d: dotQ4_K = %g, want %d", trial, got, wantK)
		}
	}
}

func repeat4[T any](x []T) []T {
	out := make([]T, 0, 4*len(x))
	for range 4 {
		out = append(out, x...)
	}
	return out
}

// TestMulMatUnalignedF32 runs f32 weights that start 2 bytes into their
// buffer, so the zero-copy float32 view cannot be used.
func TestMulMatUnalignedF32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const k, m, n = 20, 3, 5
	a := ops.FromF32(ops.F32, []int64{k, m}, opstest.RandF32(r, k*m))
	shifted := &ops.Tensor{Type: ops.F32, Ne: a.Ne, Nb: a.Nb, Buf: append(make([]byte, 2), a.Buf...), Offs: 2}
	b := ops.FromF32(ops.F32, []int64{k, n}, opstest.RandF32(r, k*n))
	want := ops.New(ops.F32, m, n)
	got := ops.New(ops.F32, m, n)
	if err := host.MulMat(want, a, b); err != nil {
		t.Fatal(err)
	}
	if err := host.MulMat(got, shifted, b); err != nil {
		t.Fatal(err)
	}
	if !opstest.EqualBits(got.ToF32(), want.ToF32()) {
		t.Errorf("unaligned weights: %v, want %v", got.ToF32(), want.ToF32())
	}
}

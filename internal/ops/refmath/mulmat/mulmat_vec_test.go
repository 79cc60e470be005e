package mulmat

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestMulMatVecMatchesScalar runs MulMat with the vector kernels (built
// with GOEXPERIMENT=simd on amd64, on a CPU with AVX2; skipped otherwise)
// and with the scalar ones on the same inputs. The quantized results must
// be bit-identical; so must the f32 and f16 ones of columns that are not
// in a group of four (both use the eight-lane order of dotF32). Groups of
// four columns sum f32/f16 in a different order in the scalar kernels, so
// there they need only agree closely.
func TestMulMatVecMatchesScalar(t *testing.T) {
	if !host.Vec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	shapes := []struct{ k, m, n int64 }{
		{32, 1, 1},
		{96, 5, 3},
		{256, 19, 1},
		{2144, 9, 2}, // 67 blocks: more than one chunk of vecChunk
		{512, 16, 4},
		{256, 7, 9},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K} {
		for _, s := range shapes {
			k := s.k
			if typ == ops.F32 || typ == ops.F16 {
				k += 3 // a tail that is not a multiple of 8
			}
			if k%int64(typ.BlockSize()) != 0 {
				continue
			}
			for _, act := range []string{"random", "extreme"} {
				name := fmt.Sprintf("%s/k=%d,m=%d,n=%d/%s", typ, k, s.m, s.n, act)
				t.Run(name, func(t *testing.T) {
					a := rawWeights(r, typ, k, s.m)
					x := opstest.RandF32(r, int(k*s.n))
					if act == "extreme" {
						// Every quantized activation is ±127, the
						// bound of the VPMADDUBSW argument.
						for i := range x {
							x[i] = float32(1 - 2*r.IntN(2))
						}
					}
					b := ops.FromF32(ops.F32, []int64{k, s.n}, x)
					vec, scalar := ops.New(ops.F32, s.m, s.n), ops.New(ops.F32, s.m, s.n)
					host.mulMat(vec, a, b, true)
					host.mulMat(scalar, a, b, false)
					got, want := vec.ToF32(), scalar.ToF32()
					exact := typ != ops.F32 && typ != ops.F16 || s.n < 4
					if exact {
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("dst[%d] = %g (vector), %g (scalar)", i, got[i], want[i])
							}
						}
					} else if e := maxRelErr(got, want); e > 1e-5 {
						t.Errorf("max error relative to max |dst| = %g", e)
					}
				})
			}
		}
	}
}

// rawWeights is an m×k src0 with random bytes (quants over their whole
// range, including −128 for q8_0) and block scales of either sign; f16
// weights include zeros, subnormals and the largest finite values.
func rawWeights(r *rand.Rand, t ops.Type, k, m int64) *ops.Tensor {
	x := ops.New(t, k, m)
	switch t {
	case ops.F32:
		for i := 0; i < len(x.Buf); i += 4 {
			binary.LittleEndian.PutUint32(x.Buf[i:], math.Float32bits(r.Float32()*2-1))
		}
		return x
	case ops.F16:
		for i := 0; i < len(x.Buf); i += 2 {
			h := ops.F32ToF16(r.Float32()*2 - 1)
			switch r.IntN(8) {
			case 0:
				h = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15 // zero or subnormal
			case 1:
				h = 0x7bff | uint16(r.IntN(2))<<15 // ±65504
			}
			binary.LittleEndian.PutUint16(x.Buf[i:], h)
		}
		return x
	}
	for i := range x.Buf {
		x.Buf[i] = byte(r.Uint32())
	}
	for off := 0; off < len(x.Buf); off += t.TypeSize() {
		binary.LittleEndian.PutUint16(x.Buf[off:], ops.F32ToF16((r.Float32()*2-1)/64))
		if t == ops.Q4_K {
			binary.LittleEndian.PutUint16(x.Buf[off+2:], ops.F32ToF16(r.Float32()/64))
		}
	}
	return x
}

// TestMulMatVecSpecialF16 checks that infinities and NaNs in f16 weights
// propagate as in the scalar kernels.
func TestMulMatVecSpecialF16(t *testing.T) {
	if !host.Vec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	const k, m = 24, 4
	a := ops.New(ops.F16, k, m)
	for i := 0; i < k*m; i++ {
		binary.LittleEndian.PutUint16(a.Buf[2*i:], ops.F32ToF16(0.5))
	}
	binary.LittleEndian.PutUint16(a.Buf[2*3:], 0x7c00)        // row 0: +inf
	binary.LittleEndian.PutUint16(a.Buf[2*(k+5):], 0xfc00)    // row 1: -inf
	binary.LittleEndian.PutUint16(a.Buf[2*(2*k+7):], 0x7e01)  // row 2: NaN
	binary.LittleEndian.PutUint16(a.Buf[2*(3*k+20):], 0x7c00) // row 3: +inf...
	binary.LittleEndian.PutUint16(a.Buf[2*(3*k+1):], 0xfc00)  // ...and -inf: NaN
	b := ops.FromF32(ops.F32, []int64{k, 1}, opstest.Seq(k, func(int) float32 { return 1 }))
	vec, scalar := ops.New(ops.F32, m, 1), ops.New(ops.F32, m, 1)
	host.mulMat(vec, a, b, true)
	host.mulMat(scalar, a, b, false)
	got, want := vec.ToF32(), scalar.ToF32()
	if !math.IsInf(float64(want[0]), 1) || !math.IsInf(float64(want[1]), -1) || !math.IsNaN(float64(want[2])) || !math.IsNaN(float64(want[3])) {
		t.Fatalf("scalar = %v, want [+Inf -Inf NaN NaN]", want)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("dst[%d] = %g (%#x) vector, %g (%#x) scalar", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

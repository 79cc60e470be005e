package mulmat

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// f16Rows returns m rows of k random halves (|x| < 2), a sixteenth of
// them replaced by zeros, subnormals, infinities or NaNs (quiet and
// signalling) when special.
func f16Rows(r *rand.Rand, m, k int, special bool) [][]byte {
	specials := []uint16{0x0000, 0x8000, 0x0001, 0x83ff, 0x0200, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfd55, 0x7bff}
	rows := make([][]byte, m)
	for i := range rows {
		rows[i] = make([]byte, 2*k)
		for j := range k {
			h := ops.F32ToF16(float32(r.Float64()*4 - 2))
			if special && r.IntN(16) == 0 {
				h = specials[r.IntN(len(specials))]
			}
			binary.LittleEndian.PutUint16(rows[i][2*j:], h)
		}
	}
	return rows
}

// TestDotF16F16C8R checks the eight-row F16C dot product against the
// scalar dotF16Bytes and, in the vector build, the four-row archsimd
// kernel: bit for bit, but NaN results need only both be NaN (as in
// TestDotF16F16C4R).
func TestDotF16F16C8R(t *testing.T) {
	if !host.F16C {
		t.Skip("CPU without F16C")
	}
	r := rand.New(rand.NewPCG(45, 46))
	for _, k := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 100, 1000, 4096 + 13} {
		for _, special := range []bool{false, true} {
			rows := f16Rows(r, 8, k, special)
			b := opstest.RandF32(r, k)
			var a [8][]byte
			copy(a[:], rows)
			got := cpu.Dot8F(ops.F16, &a, b)
			for j := range 8 {
				refs := []float32{dotF16Bytes(rows[j], b)}
				if host.Vec {
					refs = append(refs, host.dotF16Vec4R(rows[j], rows[j], rows[j], rows[j], b)[0])
				}
				checkDot8(t, "F16C", k, special, j, got[j], refs)
			}
		}
	}
}

// TestDotF32AVX8R checks the eight-row f32 dot product against the
// scalar dotF32Bytes, on rows with zeros, subnormals, infinities and NaNs
// when special, for k with every tail mod 8: bit for bit (NaN results
// both NaN).
func TestDotF32AVX8R(t *testing.T) {
	if !host.F32Dot8 {
		t.Skip("CPU without AVX")
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -3e-39, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38}
	r := rand.New(rand.NewPCG(47, 48))
	for _, k := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 100, 1000, 4096 + 13} {
		for _, special := range []bool{false, true} {
			var a [8][]byte
			rows := make([][]byte, 8)
			for j := range rows {
				rows[j] = make([]byte, 4*k+4) // one value more than k: not read
				for i := range k + 1 {
					v := float32(r.Float64()*4 - 2)
					if special && r.IntN(16) == 0 {
						v = specials[r.IntN(len(specials))]
					}
					binary.LittleEndian.PutUint32(rows[j][4*i:], math.Float32bits(v))
				}
				a[j] = rows[j]
			}
			b := opstest.RandF32(r, k)
			got := cpu.Dot8F(ops.F32, &a, b)
			for j := range 8 {
				checkDot8(t, "AVX", k, special, j, got[j], []float32{dotF32Bytes(rows[j], b)})
			}
		}
	}
}

func checkDot8(t *testing.T, kernel string, k int, special bool, row int, got float32, refs []float32) {
	t.Helper()
	for _, ref := range refs {
		if !(math.IsNaN(float64(got)) && math.IsNaN(float64(ref))) && math.Float32bits(got) != math.Float32bits(ref) {
			t.Fatalf("k=%d special=%v row %d: %s %g (%#x), want %g (%#x)", k, special, row, kernel, got, math.Float32bits(got), ref, math.Float32bits(ref))
		}
	}
}

// TestMulMatDot8MatchesScalar runs MulMat of f32 and f16 weights against
// one or three columns, with the eight-row assembly where this build
// takes it (hasDot8F), on row counts with and without a remainder of
// eight, against the scalar kernels alone: bit for bit.
func TestMulMatDot8MatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	for _, typ := range []ops.Type{ops.F32, ops.F16} {
		for _, s := range []struct{ k, m, n int64 }{{64, 8, 1}, {100, 19, 1}, {96, 37, 3}, {4096, 16, 1}} {
			a := ops.FromF32(typ, []int64{s.k, s.m}, opstest.RandF32(r, int(s.k*s.m)))
			b := ops.FromF32(ops.F32, []int64{s.k, s.n}, opstest.RandF32(r, int(s.k*s.n)))
			got, want := ops.New(ops.F32, s.m, s.n), ops.New(ops.F32, s.m, s.n)
			host.mulMat(got, a, b, host.Vec)
			mulMatScalar(want, a, b)
			if !host.prepareActivationsVec(a, b, host.Vec, false).hasDot8F(typ) {
				t.Logf("%s: no eight-row kernel in this build or on this CPU", typ)
			}
			g, w := got.ToF32(), want.ToF32()
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%s k=%d m=%d n=%d: dst[%d] = %g, scalar %g", typ, s.k, s.m, s.n, i, g[i], w[i])
				}
			}
		}
	}
}

package mulmat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/codec"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestMulMat8RowsMatchScalar runs the eight-row q8_0/q4_0 kernels
// (mulmat_tile.go) on shapes with several groups of eight rows, a
// remainder of rows, more than one block of mulMatColBlock columns, and
// weight scales that are subnormal, infinite or NaN, against the scalar
// kernels: bit-identical (NaN results need only both be NaN).
func TestMulMat8RowsMatchScalar(t *testing.T) {
	if !host.Vec && !host.VNNI && !host.QAVX2 {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	shapes := []struct{ k, m, n int64 }{
		{32, 8, 1},
		{64, 24, 3},
		{2144, 19, 2},
		{256, 40, 37},
		{96, 33, 17},
	}
	r := rand.New(rand.NewPCG(21, 22))
	// Every kernel set this CPU runs, forced: the archsimd AVX2 kernels,
	// the AVX-512 ones, the VNNI assembly and the AVX2 assembly (with and
	// without archsimd, whichever this build has).
	for _, mode := range []struct{ vec, v512, vnni, qavx2 bool }{
		{true, false, false, false}, {true, true, false, false}, {true, true, true, false}, {true, false, false, true},
		{false, false, true, false}, {false, false, false, true},
	} {
		if mode.vec != host.Vec || mode.v512 && !host.Vec512 || mode.vnni && !host.VNNI || mode.qavx2 && !host.QAVX2 {
			continue
		}
		ks := Host()
		ks.Vec512, ks.VNNI, ks.QAVX2 = mode.v512, mode.vnni, mode.qavx2
		testMulMat8Rows(t, &ks, r, shapes, mode.vec, fmt.Sprintf("vec=%v,avx512=%v,vnni=%v,qavx2=%v", mode.vec, mode.v512, mode.vnni, mode.qavx2))
	}
}

// mulMatScalar is mulMat by the scalar kernels alone (not even the
// assembly that asmAlone adds to them), the tests' reference.
func mulMatScalar(dst, a, b *ops.Tensor) {
	ks := Host()
	ks.VNNI, ks.QAVX2, ks.F16Dot, ks.F32Dot8, ks.NEON, ks.DotProd = false, false, false, false, false, false
	ks.mulMat(dst, a, b, false)
}

func testMulMat8Rows(t *testing.T, ks *Kernels, r *rand.Rand, shapes []struct{ k, m, n int64 }, vecOn bool, mode string) {
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		for _, s := range shapes {
			for _, act := range []string{"random", "extreme", "edge-quants", "special-scales"} {
				t.Run(fmt.Sprintf("%s/%s/k=%d,m=%d,n=%d/%s", mode, typ, s.k, s.m, s.n, act), func(t *testing.T) {
					a := rawWeights(r, typ, s.k, s.m)
					x := opstest.RandF32(r, int(s.k*s.n))
					switch act {
					case "extreme":
						for i := range x {
							x[i] = float32(1 - 2*r.IntN(2))
						}
					case "edge-quants":
						// Largest products: q8_0 quants −128 (or q4_0
						// nibbles 0 and 15) against activations ±127.
						for off := 0; off < len(a.Buf); off += typ.TypeSize() {
							for i := off + 2; i < off+typ.TypeSize(); i++ {
								a.Buf[i] = 0x80
								if typ == ops.Q4_0 {
									a.Buf[i] = []byte{0x00, 0xff, 0x0f, 0xf0}[r.IntN(4)]
								}
							}
						}
						sign := float32(1 - 2*r.IntN(2))
						for i := range x {
							x[i] = sign
						}
					case "special-scales":
						specials := []uint16{0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e01, 0x0000}
						for off := 0; off < len(a.Buf); off += typ.TypeSize() {
							if r.IntN(16) == 0 {
								binary.LittleEndian.PutUint16(a.Buf[off:], specials[r.IntN(len(specials))])
							}
						}
					}
					b := ops.FromF32(ops.F32, []int64{s.k, s.n}, x)
					vec, scalar := ops.New(ops.F32, s.m, s.n), ops.New(ops.F32, s.m, s.n)
					ks.mulMat(vec, a, b, vecOn)
					mulMatScalar(scalar, a, b)
					got, want := vec.ToF32(), scalar.ToF32()
					for i := range got {
						g, w := got[i], want[i]
						if math.IsNaN(float64(g)) && math.IsNaN(float64(w)) {
							continue
						}
						if math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("dst[%d] = %g (vector), %g (scalar)", i, g, w)
						}
					}
				})
			}
		}
	}
}

// TestMulMat8RowsFloat64 checks the eight-row kernels against an
// independent float64 computation of the same quantities: the dequantized
// weights times the activations quantized to q8_0 and dequantized.
func TestMulMat8RowsFloat64(t *testing.T) {
	const k, m, n = 512, 24, 5
	r := rand.New(rand.NewPCG(23, 24))
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		t.Run(typ.String(), func(t *testing.T) {
			a := ops.FromF32(typ, []int64{k, m}, opstest.RandF32(r, k*m))
			x := opstest.RandF32(r, k*n)
			b := ops.FromF32(ops.F32, []int64{k, n}, x)
			bq := ops.FromF32(ops.Q8_0, []int64{k, n}, x).ToF32()
			aw := a.ToF32()
			got := mustOp(t, ops.OpMulMat, []*ops.Tensor{a, b}, nil).ToF32()
			for c := 0; c < n; c++ {
				for i := 0; i < m; i++ {
					var want, mag float64
					for j := 0; j < k; j++ {
						p := float64(aw[i*k+j]) * float64(bq[c*k+j])
						want += p
						mag += math.Abs(p)
					}
					if e := math.Abs(float64(got[c*m+i]) - want); e > 1e-5*mag {
						t.Errorf("dst[%d, %d] = %g, float64 %g (|error| %g, Σ|a·b| %g)", i, c, got[c*m+i], want, e, mag)
					}
				}
			}
		})
	}
}

// TestMulMatIDGroupedMatchesScalar checks MUL_MAT_ID's grouping of
// columns by expert (mulMatID8) against mul_mat with the scalar kernels,
// column by column, bit for bit, with experts used by several columns and
// experts used by none.
func TestMulMatIDGroupedMatchesScalar(t *testing.T) {
	const k, m, nAs, nUsed, nTok = 128, 27, 6, 3, 7
	r := rand.New(rand.NewPCG(25, 26))
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		t.Run(typ.String(), func(t *testing.T) {
			as := ops.FromF32(typ, []int64{k, m, nAs}, opstest.RandF32(r, k*m*nAs))
			b := ops.FromF32(ops.F32, []int64{k, nUsed, nTok}, opstest.RandF32(r, k*nUsed*nTok))
			idv := make([]int64, nUsed*nTok)
			for i := range idv {
				idv[i] = int64(r.IntN(nAs - 1)) // expert nAs-1 is never used
			}
			got := mustOp(t, ops.OpMulMatID, []*ops.Tensor{as, b, ops.FromInts(ops.I32, []int64{nUsed, nTok}, idv)}, nil)
			for tok := int64(0); tok < nTok; tok++ {
				for e := int64(0); e < nUsed; e++ {
					w, err := ops.View(as, []int64{k, m}, []uint64{as.Nb[1]}, uint64(idv[tok*nUsed+e])*as.Nb[2])
					if err != nil {
						t.Fatal(err)
					}
					col, err := ops.View(b, []int64{k, 1}, []uint64{b.Nb[1]}, uint64(e)*b.Nb[1]+uint64(tok)*b.Nb[2])
					if err != nil {
						t.Fatal(err)
					}
					want := ops.New(ops.F32, m, 1)
					mulMatScalar(want, w, ops.Cont(col))
					wv := want.ToF32()
					for i := int64(0); i < m; i++ {
						if g := got.F32(i, e, tok, 0); math.Float32bits(g) != math.Float32bits(wv[i]) {
							t.Fatalf("dst[%d, %d, %d] = %g, scalar mul_mat %g", i, e, tok, g, wv[i])
						}
					}
				}
			}
		})
	}
}

// TestDequantQ6_KVec checks the vector q6_K dequantization of the generic
// MulMat path against dequantizeBlockQ6_K, bit for bit, on random blocks
// whose scales d include zeros, subnormals, infinities and NaNs.
func TestDequantQ6_KVec(t *testing.T) {
	const nb = 9
	r := rand.New(rand.NewPCG(27, 28))
	x := make([]byte, nb*codec.SizeQ6_K)
	for i := range x {
		x[i] = byte(r.Uint32())
	}
	specials := []uint16{0x0000, 0x0001, 0x7c00, 0xfc00, 0x7e01, ops.F32ToF16(0.01), ops.F32ToF16(-3)}
	for b := range nb {
		binary.LittleEndian.PutUint16(x[b*codec.SizeQ6_K+208:], specials[b%len(specials)])
	}
	got := make([]float32, nb*codec.QKK)
	if !host.dequantRowQ6_KVec(x, got) {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	want := make([]float32, codec.QKK)
	for b := range nb {
		codec.DequantizeBlockQ6_K(x[b*codec.SizeQ6_K:(b+1)*codec.SizeQ6_K], want)
		for i, w := range want {
			if g := got[b*codec.QKK+i]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("block %d value %d = %g (%#x), scalar %g (%#x)", b, i, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
}

// TestMulMat8RowsQuadsBatched runs the four-column q8_0 kernel
// (dot8R4) on batches of columns: b [64, 6, 3, 2] (one four and two more
// columns a batch, quads at batch offsets 6, 12, ...) against a [64, 24,
// 3, 1] broadcast over dims 3, bit for bit against the scalar kernels.
func TestMulMat8RowsQuadsBatched(t *testing.T) {
	if !host.VNNI {
		t.Skip("no VNNI kernels on this CPU")
	}
	r := rand.New(rand.NewPCG(23, 24))
	a := rawWeights(r, ops.Q8_0, 64, 24*3)
	a.Ne[1], a.Ne[2] = 24, 3
	a.Nb[2] = a.Nb[1] * 24
	a.Nb[3] = a.Nb[2] * 3
	b := ops.FromF32(ops.F32, []int64{64, 6, 3, 2}, opstest.RandF32(r, 64*6*3*2))
	got, want := ops.New(ops.F32, 24, 6, 3, 2), ops.New(ops.F32, 24, 6, 3, 2)
	host.mulMat(got, a, b, host.Vec)
	mulMatScalar(want, a, b)
	if !bytes.Equal(got.Buf, want.Buf) {
		t.Fatal("batched q8_0 MulMat by the four-column kernel differs from the scalar kernels")
	}
}

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

// TestMulMatFloatTilesMatchScalar runs the f32/f16 register tiles
// (mulmat_ftile.go, n ≥ 2 columns with the vector kernels) on shapes with
// every column remainder (n mod 4), row counts that are not multiples of
// four or of a tile, k with a tail that is not a multiple of 8 and more
// than one chunk of fTileK, broadcast over dim 2, and weights with zeros,
// subnormals, infinities and NaNs, against the scalar single-column
// kernels (dotF32Bytes, dotF16Bytes) on every (row, column), or, on the
// shapes ggml computes by tinyBLAS (sgemmOrder: k a multiple of 16, m of
// 4), against sgemmDot: bit-identical
// (NaN results need only both be NaN: which NaN's payload an add passes on
// depends on its operand order, which the compiler may swap).
func TestMulMatFloatTilesMatchScalar(t *testing.T) {
	if !host.Vec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	shapes := []struct{ k, m, n, ne2 int64 }{
		{3, 5, 2, 1},
		{13, 19, 3, 1},
		{64, 16, 4, 1},
		{96, 37, 5, 1},
		{int64(fTileK) + 5, 9, 6, 1},
		{int64(fTileK16) + 11, 5, 2, 1},
		{2*int64(fTileK16) + 8, 21, 7, 1},
		{2144 + 3, 17, 9, 1},
		{200, 33, 33, 1},
		{40, 6, 3, 2},
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, typ := range []ops.Type{ops.F32, ops.F16} {
		for _, s := range shapes {
			for _, w := range []string{"random", "special"} {
				t.Run(fmt.Sprintf("%s/k=%d,m=%d,n=%d,ne2=%d/%s", typ, s.k, s.m, s.n, s.ne2, w), func(t *testing.T) {
					a := rawWeights(r, typ, s.k, s.m)
					if w == "special" {
						specialFloatWeights(r, a)
					}
					x := opstest.RandF32(r, int(s.k*s.n*s.ne2))
					b := ops.FromF32(ops.F32, []int64{s.k, s.n, s.ne2}, x)
					dst := ops.New(ops.F32, s.m, s.n, s.ne2)
					host.mulMat(dst, a, b, true)
					act := host.prepareActivationsVec(a, b, false, false)
					rowBytes := int(a.Type.RowSize(a.Ne[0]))
					for i2 := range s.ne2 {
						for i1 := range s.n {
							for i0 := range s.m {
								row := a.RowBytes(i0, 0, 0)[:rowBytes]
								c := int(i1 + s.n*i2)
								var want float32
								if sgemmOrder(a, b) {
									want = sgemmDot(typ, row, act.f32[c*int(s.k):(c+1)*int(s.k)])
								} else {
									want = act.dot1(typ, row, c)
								}
								got := dst.F32(i0, i1, i2, 0)
								if math.IsNaN(float64(got)) && math.IsNaN(float64(want)) {
									continue
								}
								if math.Float32bits(got) != math.Float32bits(want) {
									t.Fatalf("dst[%d, %d, %d] = %g (%#x), scalar %g (%#x)", i0, i1, i2, got, math.Float32bits(got), want, math.Float32bits(want))
								}
							}
						}
					}
				})
			}
		}
	}
}

// specialFloatWeights puts subnormals and negative zeros of a's type (f32
// or f16) at random places in a, and an infinity or a NaN in about half of
// its rows.
func specialFloatWeights(r *rand.Rand, a *ops.Tensor) {
	esz := a.Type.TypeSize()
	put := func(off int, v uint32) {
		if esz == 2 {
			binary.LittleEndian.PutUint16(a.Buf[off:], uint16(v))
		} else {
			binary.LittleEndian.PutUint32(a.Buf[off:], v)
		}
	}
	tiny := []uint32{0x00000001, 0x807fffff, 0x80000000}
	huge := []uint32{0x7f800000, 0xff800000, 0x7fc00001}
	if esz == 2 {
		tiny = []uint32{0x0001, 0x83ff, 0x8000}
		huge = []uint32{0x7c00, 0xfc00, 0x7e01}
	}
	for off := 0; off < len(a.Buf); off += esz {
		if r.IntN(16) == 0 {
			put(off, tiny[r.IntN(len(tiny))])
		}
	}
	k := int(a.Ne[0])
	for row := range int(a.Ne[1]) {
		if r.IntN(2) == 0 {
			put(esz*(row*k+r.IntN(k)), huge[r.IntN(len(huge))])
		}
	}
}

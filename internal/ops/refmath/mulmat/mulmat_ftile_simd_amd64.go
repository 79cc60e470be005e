//go:build goexperiment.simd && amd64

package mulmat

//go:generate go test ./gen -run ^TestFilesUpToDate$/^tile4$ -update

import (
	"simd/archsimd"
	"unsafe"

	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// The register tiles of mulmat_ftile.go. Each adds, over nv values (a
// multiple of 8), the products of f32 weight rows w and f32 activation
// rows x to running lane sums in memory: those of (row i, column j) are
// the eight float32s at acc + i·rs + 32·j. Every sum is updated as
// s = s + w·x, a multiply and a separate add, lane by lane.
//
// The loads in the loops are written out rather than by loadF32x8: the
// compiler schedules the values of a block in the order of their source
// positions, and those of an inlined helper all sort before the loop's own
// lines. Even so, the products (used in the loop body) are all scheduled
// before the sums (used only by the next iteration), so a kernel keeps at
// most six sums: six sums, six products and three loaded vectors fill
// the sixteen registers, and six chains of adds are enough to keep both
// add units busy. (Eight sums spilled two of them to the stack on every
// iteration, and the store-to-load latency then bounded the loop.)

// f32Tile2x3 is two weight rows against three activation rows.
func f32Tile2x3(w0, w1, x0, x1, x2, acc unsafe.Pointer, rs, nv int) {
	a1 := unsafe.Add(acc, rs)
	s00, s01, s02 := cpu.LoadF32x8(acc, 0), cpu.LoadF32x8(acc, 32), cpu.LoadF32x8(acc, 64)
	s10, s11, s12 := cpu.LoadF32x8(a1, 0), cpu.LoadF32x8(a1, 32), cpu.LoadF32x8(a1, 64)
	for o := 0; o < 4*nv; o += 32 {
		v0 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w0, o)))
		v1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w1, o)))
		y := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x0, o)))
		s00 = s00.Add(v0.Mul(y))
		s10 = s10.Add(v1.Mul(y))
		y = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x1, o)))
		s01 = s01.Add(v0.Mul(y))
		s11 = s11.Add(v1.Mul(y))
		y = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x2, o)))
		s02 = s02.Add(v0.Mul(y))
		s12 = s12.Add(v1.Mul(y))
	}
	storeF32x8(acc, 0, s00)
	storeF32x8(acc, 32, s01)
	storeF32x8(acc, 64, s02)
	storeF32x8(a1, 0, s10)
	storeF32x8(a1, 32, s11)
	storeF32x8(a1, 64, s12)
	archsimd.ClearAVXUpperBits()
}

// f32Tile3x2 is three weight rows against two activation rows.
func f32Tile3x2(w0, w1, w2, x0, x1, acc unsafe.Pointer, rs, nv int) {
	a1, a2 := unsafe.Add(acc, rs), unsafe.Add(acc, 2*rs)
	s00, s01 := cpu.LoadF32x8(acc, 0), cpu.LoadF32x8(acc, 32)
	s10, s11 := cpu.LoadF32x8(a1, 0), cpu.LoadF32x8(a1, 32)
	s20, s21 := cpu.LoadF32x8(a2, 0), cpu.LoadF32x8(a2, 32)
	for o := 0; o < 4*nv; o += 32 {
		y0 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x0, o)))
		y1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x1, o)))
		v := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w0, o)))
		s00 = s00.Add(v.Mul(y0))
		s01 = s01.Add(v.Mul(y1))
		v = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w1, o)))
		s10 = s10.Add(v.Mul(y0))
		s11 = s11.Add(v.Mul(y1))
		v = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w2, o)))
		s20 = s20.Add(v.Mul(y0))
		s21 = s21.Add(v.Mul(y1))
	}
	storeF32x8(acc, 0, s00)
	storeF32x8(acc, 32, s01)
	storeF32x8(a1, 0, s10)
	storeF32x8(a1, 32, s11)
	storeF32x8(a2, 0, s20)
	storeF32x8(a2, 32, s21)
	archsimd.ClearAVXUpperBits()
}

// f32Tile4x1 is four weight rows against one activation row.
func f32Tile4x1(w0, w1, w2, w3, x0, acc unsafe.Pointer, rs, nv int) {
	a1, a2, a3 := unsafe.Add(acc, rs), unsafe.Add(acc, 2*rs), unsafe.Add(acc, 3*rs)
	s0, s1, s2, s3 := cpu.LoadF32x8(acc, 0), cpu.LoadF32x8(a1, 0), cpu.LoadF32x8(a2, 0), cpu.LoadF32x8(a3, 0)
	for o := 0; o < 4*nv; o += 32 {
		y := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(x0, o)))
		s0 = s0.Add(archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w0, o))).Mul(y))
		s1 = s1.Add(archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w1, o))).Mul(y))
		s2 = s2.Add(archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w2, o))).Mul(y))
		s3 = s3.Add(archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(w3, o))).Mul(y))
	}
	storeF32x8(acc, 0, s0)
	storeF32x8(a1, 0, s1)
	storeF32x8(a2, 0, s2)
	storeF32x8(a3, 0, s3)
	archsimd.ClearAVXUpperBits()
}

func storeF32x8(p unsafe.Pointer, off int, v archsimd.Float32x8) {
	v.Store((*[8]float32)(unsafe.Add(p, off)))
}

// widenF16s4Vec is widenF16sVec of the n halves (a multiple of 8) at each
// of src[0..3] to dst[0..3], the four rows read side by side: reading
// several rows at once keeps more of their cache lines in flight from
// memory than one row after the other.
func widenF16s4Vec(src, dst *[4]unsafe.Pointer, n int) {
	keep, expo, inf, scale := cpu.F16Consts()
	s0, s1, s2, s3 := src[0], src[1], src[2], src[3]
	d0, d1, d2, d3 := dst[0], dst[1], dst[2], dst[3]
	for i := 0; i < n; i += 8 {
		cpu.WidenF16x8(s0, 2*i, keep, expo, inf, scale).Store((*[8]float32)(unsafe.Add(d0, 4*i)))
		cpu.WidenF16x8(s1, 2*i, keep, expo, inf, scale).Store((*[8]float32)(unsafe.Add(d1, 4*i)))
		cpu.WidenF16x8(s2, 2*i, keep, expo, inf, scale).Store((*[8]float32)(unsafe.Add(d2, 4*i)))
		cpu.WidenF16x8(s3, 2*i, keep, expo, inf, scale).Store((*[8]float32)(unsafe.Add(d3, 4*i)))
	}
	archsimd.ClearAVXUpperBits()
}

// f32Tile4x4, f32Tile4x3 and f32Tile4x2 are four weight rows (w)
// against four, three or two activation rows (x), the sums of (row i,
// column j) at acc + i·rs + 32·j, as f32Tile2x3.
//
//go:noescape
func f32Tile4x4(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func f32Tile4x3(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func f32Tile4x2(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

// f16Tile4x4F16C and f16Tile4x3F16C are f32Tile4x4 and f32Tile4x3 on f16
// weight rows (p), widened by VCVTPH2PS.
//
//go:noescape
func f16Tile4x4F16C(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func f16Tile4x3F16C(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

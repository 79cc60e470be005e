package mulmat

import (
	"unsafe"
)

// sgemmKernel adds nv values (a multiple of 16) of the products of the two
// weight rows w (f32, or f16 if f16) and nc ≤ 2 activation rows x (f32) to
// their 16-lane sums at acc (row stride rs bytes), by the arm64 tiles
// (mulmat_sgemm_arm64.s, Kernels.NEON: SgemmR = SgemmC = 2). xh (halves)
// is never asked for: sgemmHalves wants SgemmC = 4.
func (ks *Kernels) sgemmKernel(f16, _ bool, w, x *[4]unsafe.Pointer, nc int, acc unsafe.Pointer, rs, nv int) {
	switch {
	case f16 && nc == 2:
		sgemmF16Tile2x2NEON(w, x, acc, rs, nv)
	case f16:
		sgemmF16Tile2x1NEON(w, x, acc, rs, nv)
	case nc == 2:
		sgemmF32Tile2x2NEON(w, x, acc, rs, nv)
	default:
		sgemmF32Tile2x1NEON(w, x, acc, rs, nv)
	}
}

//go:noescape
func sgemmF32Tile2x2NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32Tile2x1NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile2x2NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile2x1NEON(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

package mulmat

//go:generate go test ./gen -run ^TestFilesUpToDate$/^sgemm$ -update

import (
	"unsafe"
)

// sgemmKernel adds nv values (a multiple of 16) of the products of the
// sgemmVecR weight rows w (f32, or f16 if f16) and nc ≤ sgemmVecC
// activation rows x (f32, or f16 if xh: f16 weights with the AVX-512
// tiles only) to their 16-lane sums at acc (row stride rs bytes).
func (ks *Kernels) sgemmKernel(f16, xh bool, w, x *[4]unsafe.Pointer, nc int, acc unsafe.Pointer, rs, nv int) {
	if ks.SgemmC == 4 { // AVX-512
		switch {
		case xh && nc == 4:
			sgemmF16HTile4x4(w, x, acc, rs, nv)
		case xh && nc == 3:
			sgemmF16HTile4x3(w, x, acc, rs, nv)
		case xh && nc == 2:
			sgemmF16HTile4x2(w, x, acc, rs, nv)
		case xh:
			sgemmF16HTile4x1(w, x, acc, rs, nv)
		case f16 && nc == 4:
			sgemmF16Tile4x4(w, x, acc, rs, nv)
		case f16 && nc == 3:
			sgemmF16Tile4x3(w, x, acc, rs, nv)
		case f16 && nc == 2:
			sgemmF16Tile4x2(w, x, acc, rs, nv)
		case f16:
			sgemmF16Tile4x1(w, x, acc, rs, nv)
		case nc == 4:
			sgemmF32Tile4x4(w, x, acc, rs, nv)
		case nc == 3:
			sgemmF32Tile4x3(w, x, acc, rs, nv)
		case nc == 2:
			sgemmF32Tile4x2(w, x, acc, rs, nv)
		default:
			sgemmF32Tile4x1(w, x, acc, rs, nv)
		}
		return
	}
	switch {
	case f16 && nc == 3:
		sgemmF16TileY4x3(w, x, acc, rs, nv)
	case f16 && nc == 2:
		sgemmF16TileY4x2(w, x, acc, rs, nv)
	case f16:
		sgemmF16TileY4x1(w, x, acc, rs, nv)
	case nc == 3:
		sgemmF32TileY4x3(w, x, acc, rs, nv)
	case nc == 2:
		sgemmF32TileY4x2(w, x, acc, rs, nv)
	default:
		sgemmF32TileY4x1(w, x, acc, rs, nv)
	}
}

//go:noescape
func sgemmF32Tile4x4(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32Tile4x3(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32Tile4x2(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32Tile4x1(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile4x4(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile4x3(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile4x2(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16Tile4x1(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32TileY4x3(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32TileY4x2(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF32TileY4x1(w, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16TileY4x3(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16TileY4x2(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16TileY4x1(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16HTile4x4(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16HTile4x3(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16HTile4x2(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

//go:noescape
func sgemmF16HTile4x1(p, x *[4]unsafe.Pointer, acc unsafe.Pointer, rs, nv int)

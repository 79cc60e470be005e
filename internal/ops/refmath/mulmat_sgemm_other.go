//go:build !amd64

package refmath

import (
	"unsafe"
)

// sgemmVecR and sgemmVecC are 0: there are no tinyBLAS-order tiles off
// amd64, sgemmDot computes those shapes.
var sgemmVecR, sgemmVecC = 0, 0

func sgemmKernel(bool, bool, *[4]unsafe.Pointer, *[4]unsafe.Pointer, int, unsafe.Pointer, int, int) {
	panic("unreachable")
}

//go:build !amd64 && !arm64

package mulmat

import (
	"unsafe"
)

func (ks *Kernels) sgemmKernel(bool, bool, *[4]unsafe.Pointer, *[4]unsafe.Pointer, int, unsafe.Pointer, int, int) {
	panic("unreachable")
}

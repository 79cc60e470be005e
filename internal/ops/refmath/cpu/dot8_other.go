//go:build !amd64 && !arm64

package cpu

import (
	"unsafe"

	"github.com/ainekko/et/internal/ops"
)

// dot8Kernel is Dot8F's assembly (amd64's and arm64's): Dot8F is never
// called here.
func dot8Kernel(ops.Type, *[8]unsafe.Pointer, unsafe.Pointer, int, *[8][8]float32) {
	panic("unreachable")
}

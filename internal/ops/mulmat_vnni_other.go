//go:build !amd64

package ops

import "unsafe"

// vecVNNI is false: the VNNI kernels are amd64 assembly.
var vecVNNI = false

func q8_0Rows8VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q8_0Rows8x2VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8x2VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

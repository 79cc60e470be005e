//go:build !amd64

package mulmat

import (
	"unsafe"
)

func q8_0Rows8VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q8_0Rows8x2VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q8_0Rows8x4TVNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[32]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8x2VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8VNNI(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q8_0Rows8AVX2(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8AVX2(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int, *[8]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q8_0Rows8x2AVX2(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

func q4_0Rows8x2AVX2(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, uintptr, int, *[16]float32, unsafe.Pointer) {
	panic("unreachable")
}

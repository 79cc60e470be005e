//go:build !(goexperiment.simd && amd64)

package mulmat

import (
	"unsafe"
)

// Without GOEXPERIMENT=simd on amd64 there are no vector kernels: MulMat
// always uses the scalar ones in mulmat.go, and these are never called.

func q4_0Rows8Fused512(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) [8]float32 {
	panic("unreachable")
}

func dotQ8_0Vec([]byte, []int8, []float32) float32 { panic("unreachable") }

func dotQ4_0Vec([]byte, []int8, []float32, []int32) float32 { panic("unreachable") }

func dotF32Vec([]byte, []float32) float32 { panic("unreachable") }

func dotF16Vec([]byte, []float32) float32 { panic("unreachable") }

func dotF32Vec4C([]byte, []float32) [4]float32 { panic("unreachable") }

func dotF16Vec4C([]byte, []float32) [4]float32 { panic("unreachable") }

func dotF32Vec4R(_, _, _, _ []byte, _ []float32) [4]float32 { panic("unreachable") }

func (ks *Kernels) dotF16Vec4R(_, _, _, _ []byte, _ []float32) [4]float32 { panic("unreachable") }

func dotQ8_0Vec4R(_, _, _, _ []byte, _ []int8, _ []float32) [4]float32 { panic("unreachable") }

func dotQ4_0Vec4R(_, _, _, _ []byte, _ []int8, _ []float32, _ []int32) [4]float32 {
	panic("unreachable")
}

func q8_0Rows8Vec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) [8]float32 {
	panic("unreachable")
}

func q4_0Rows8Vec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) [8]float32 {
	panic("unreachable")
}

func (ks *Kernels) widenF16sVec([]uint16, []float32) { panic("unreachable") }

func (ks *Kernels) dequantRowQ6_KVec([]byte, []float32) bool { return false }

func q8_0Rows8FusedVec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) [8]float32 {
	panic("unreachable")
}

func q4_0Rows8FusedVec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) [8]float32 {
	panic("unreachable")
}

func f32Tile2x3(_, _, _, _, _, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func f32Tile3x2(_, _, _, _, _, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func f32Tile4x1(_, _, _, _, _, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func f32Tile4x4(_, _ *[4]unsafe.Pointer, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func f32Tile4x3(_, _ *[4]unsafe.Pointer, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func f32Tile4x2(_, _ *[4]unsafe.Pointer, _ unsafe.Pointer, _, _ int) { panic("unreachable") }

func widenF16s4Vec(_, _ *[4]unsafe.Pointer, _ int) { panic("unreachable") }

func q4_0Rows8Fused2Vec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) (_, _ [8]float32) {
	panic("unreachable")
}

func q8_0Rows8Fused2Vec(*[8]unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, int) (_, _ [8]float32) {
	panic("unreachable")
}

func (*floatTile) mulTileF16C(*actRows, func(int) []byte, int, int, int, int, func(int, int, float32)) {
	panic("unreachable")
}

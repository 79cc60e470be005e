//go:build !amd64

package ops

func f32ToF16Row(dst []uint16, src []float32) { f32ToF16RowScalar(dst, src) }

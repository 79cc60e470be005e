//go:build !amd64

package cpu

// F32ToF16Row is dst = F32ToF16(src), by F16C or AVX-512 where the CPU has
// them.
func (ks *Kernels) F32ToF16Row(dst []uint16, src []float32) { f32ToF16RowScalar(dst, src) }

// F32ToF16Whole is the amd64 build's F16C row conversion: never here.
func (ks *Kernels) F32ToF16Whole(*uint16, *float32, int) bool { return false }

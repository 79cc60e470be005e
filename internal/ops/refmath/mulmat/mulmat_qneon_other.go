//go:build !arm64

package mulmat

// The arm64 assembly is generated here, on the other architectures, where
// go generate sees this file (on an arm64 host run the command itself).
//go:generate go test ./gen -run ^TestFilesUpToDate$/^qneon$ -update

import "github.com/ainekko/et/internal/ops"

// The arm64 kernels (mulmat_qneon_arm64.go): Kernels.NEON is never set
// here.

func (ks *Kernels) dot8RNEON(ops.Type, *rows8, []int8, []float32, []int32, int) [8]float32 {
	panic("unreachable")
}

func (ks *Kernels) dot8R2NEON(ops.Type, *rows8, []int8, []float32, []int32, uintptr, int, *[16]float32) {
	panic("unreachable")
}

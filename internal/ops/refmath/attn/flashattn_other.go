//go:build !amd64

package attn

import (
	"github.com/ainekko/et/internal/ops"
)

func (ks *Kernels) flashAttnF16C(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	return false
}

func (ks *Kernels) flashAttnZ(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	return false
}

// faChunkZ is flashAttnZ's V chunk in keys (flashattn_z_amd64.go), here so
// that its test, which skips without flashAttnZ, compiles everywhere.
const faChunkZ = 256

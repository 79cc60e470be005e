//go:build !(goexperiment.simd && amd64)

package attn

import (
	"github.com/ainekko/et/internal/ops"
)

// flashAttnVec has no vector kernels in this build: RefFlashAttn runs its
// scalar loop.
func (ks *Kernels) flashAttnVec(dst, q, k, v, mask, sinks *ops.Tensor, scale, softcap float32, slope func(int64) float32) bool {
	return false
}

//go:build !amd64

package ops

// vecFAF16C is false: flashAttnF16C is amd64 assembly.
var vecFAF16C = false

func flashAttnF16C(dst, q, k, v, mask, sinks *Tensor, scale, softcap float32, slope func(int64) float32) bool {
	return false
}

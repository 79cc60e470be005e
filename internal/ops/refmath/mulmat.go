package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/mulmat"
)

// mm is ks as MUL_MAT's kernel set (the same fields).
func mm(ks *Kernels) *mulmat.Kernels { return (*mulmat.Kernels)(ks) }

func (ks *Kernels) refMulMat(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return mm(ks).RefMulMat(dst, srcs, p)
}

func (ks *Kernels) refMulMatID(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return mm(ks).RefMulMatID(dst, srcs, p)
}

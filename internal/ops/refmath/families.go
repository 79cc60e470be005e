package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/attn"
	"github.com/ainekko/et/internal/ops/refmath/mulmat"
)

// The op families with packages of their own run with ks as their own
// Kernels (the same fields).

func mm(ks *Kernels) *mulmat.Kernels { return (*mulmat.Kernels)(ks) }

func at(ks *Kernels) *attn.Kernels { return (*attn.Kernels)(ks) }

func (ks *Kernels) refMulMat(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return mm(ks).RefMulMat(dst, srcs, p)
}

func (ks *Kernels) refMulMatID(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return mm(ks).RefMulMatID(dst, srcs, p)
}

func (ks *Kernels) refSoftMax(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return at(ks).RefSoftMax(dst, srcs, p)
}

func (ks *Kernels) refFlashAttn(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error {
	return at(ks).RefFlashAttn(dst, srcs, p)
}

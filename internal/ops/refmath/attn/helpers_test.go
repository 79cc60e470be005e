package attn

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// host is this CPU's kernel set.
var host = &Kernels{cpu.Detect()}

// ref is ks's SOFT_MAX or FLASH_ATTN_EXT (nil for another op).
func (ks *Kernels) ref(op ops.Op) reftest.Ref {
	switch op {
	case ops.OpSoftMax:
		return ks.RefSoftMax
	case ops.OpFlashAttnExt:
		return ks.RefFlashAttn
	}
	return nil
}

func mustOpWith(t *testing.T, ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	return reftest.Must(t, op, srcs, raw, ks.ref(op))
}

func mustOp(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	return mustOpWith(t, host, op, srcs, raw)
}

func wantOpError(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any, fragments ...string) {
	t.Helper()
	reftest.WantError(t, op, srcs, raw, host.ref(op), fragments...)
}

package mulmat

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// host is this CPU's kernel set.
var host = &Kernels{cpu.Detect()}

// Host is this CPU's kernel set (a copy).
func Host() Kernels { return *host }

// runOpWith runs MUL_MAT or MUL_MAT_ID with ks as the catalog would: the
// params normalized, the sources checked and the result's type and shape
// inferred by the op's catalog row, the types' codecs checked.
func runOpWith(ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	info, ok := ops.Lookup(string(op))
	if !ok {
		return nil, &ops.UnknownOpError{Name: string(op)}
	}
	p, err := info.Normalize(raw)
	if err != nil {
		return nil, err
	}
	typ, ne, err := info.Shape(srcs, p)
	if err != nil {
		return nil, err
	}
	if err := ops.CodecsOf(typ, srcs); err != nil {
		return nil, err
	}
	dst := ops.New(typ, ne[:]...)
	switch op {
	case ops.OpMulMat:
		err = ks.RefMulMat(dst, srcs, p)
	case ops.OpMulMatID:
		err = ks.RefMulMatID(dst, srcs, p)
	default:
		return nil, &ops.UnknownOpError{Name: string(op)}
	}
	return dst, err
}

func runOp(op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	return runOpWith(host, op, srcs, raw)
}

func mustOpWith(t *testing.T, ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	y, err := runOpWith(ks, op, srcs, raw)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return y
}

func mustOp(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	return mustOpWith(t, host, op, srcs, raw)
}

func wantOpError(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any, fragments ...string) {
	t.Helper()
	_, err := runOp(op, srcs, raw)
	opstest.WantInputError(t, string(op), err, fragments...)
}

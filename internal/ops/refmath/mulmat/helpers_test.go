package mulmat

import (
	"os"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

// host is this CPU's kernel set, cut down to $ET_CPU_KERNELS where that
// is set (cpu.Kernels.Limit: avx2 on an AVX-512 machine runs the tests
// and benchmarks with what an AVX2 one runs).
var host = func() *Kernels {
	ks, err := cpu.Detect().Limit(os.Getenv("ET_CPU_KERNELS"))
	if err != nil {
		panic(err)
	}
	return &Kernels{ks}
}()

// TestHostKernelSet: the tests and benchmarks run the set
// $ET_CPU_KERNELS names. Reading the variable here, inside a test, also
// keys go test's cache on it: host's initializer reads it before the
// cache's log starts, so ET_CPU_KERNELS=avx2 go test would otherwise be
// answered from a run without it.
func TestHostKernelSet(t *testing.T) {
	name := os.Getenv("ET_CPU_KERNELS")
	want, err := cpu.Detect().Limit(name)
	if err != nil {
		t.Fatal(err)
	}
	if host.Kernels != want {
		t.Fatalf("ET_CPU_KERNELS=%q: tests run %+v, want %+v", name, host.Kernels, want)
	}
}

// Host is this CPU's kernel set (a copy).
func Host() Kernels { return *host }

// ref is ks's MUL_MAT or MUL_MAT_ID (nil for another op).
func (ks *Kernels) ref(op ops.Op) reftest.Ref {
	switch op {
	case ops.OpMulMat:
		return ks.RefMulMat
	case ops.OpMulMatID:
		return ks.RefMulMatID
	}
	return nil
}

// runOpWith runs MUL_MAT or MUL_MAT_ID with ks as the catalog would.
func runOpWith(ks *Kernels, op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	return reftest.Compute(op, srcs, raw, ks.ref(op))
}

func runOp(op ops.Op, srcs []*ops.Tensor, raw map[string]any) (*ops.Tensor, error) {
	return runOpWith(host, op, srcs, raw)
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

package refmath

import (
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/parallel"
)

// RefFunc is an op's reference math with ggml CPU semantics. It writes
// dst through dst.Nb and reads the sources through their Nb, so strided
// views work on both sides; it does not allocate dst. Call it through
// OpInfo.Run, which validates shapes first.
type RefFunc func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) error

// BindFunc fixes an op's reference math to these tensors and normalized
// params, the work that follows from their shapes, strides and storage
// done once: the returned function is Ref(dst, srcs, p) with the same
// results and errors, reading the tensors' data at every call. It
// returns nil where the op has no faster bound form for the tensors.
// A device that runs one launch many times (the reference device's
// replays) calls it instead of Ref while the tensors' storage lives.
type BindFunc func(dst *ops.Tensor, srcs []*ops.Tensor, p ops.Params) func() error

func (ks *Kernels) refMulMat(dst *ops.Tensor, srcs []*ops.Tensor, _ ops.Params) error {
	return ks.MulMat(dst, srcs[0], srcs[1])
}

// refParallel calls fn on disjoint chunks [lo, hi) covering [0, n),
// through parallel.For, with chunks of at least about 32K elements of work
// (cost is a rough per-item cost in elements) so small ops stay on the
// caller's goroutine.
func refParallel(n, cost int64, fn func(lo, hi int64)) {
	parallel.For(int(n), int(refGrain(cost)), func(lo, hi int) { fn(int64(lo), int64(hi)) })
}

// refMinWork is the least work, in elements, of one refParallel chunk:
// 16K, a few µs of element-wise work, which the pool's spinning helpers
// (parallel.For) take on at once. A variable only so that FuzzCatalog can
// split small ops too: the split's chunk boundaries are code of their own,
// and big inputs starve the fuzzer.
var refMinWork int64 = 1 << 14

// refGrain is refParallel's smallest chunk for units of cost elements.
func refGrain(cost int64) int64 {
	grain := int64(1)
	if cost > 0 && cost < refMinWork {
		grain = refMinWork / cost
	}
	return grain
}

// refInline reports whether refParallel(n, cost, fn) runs fn(0, n) on the
// calling goroutine (one chunk, or one worker), as parallel.For decides:
// a caller can then call fn itself and build no closure for the workers.
func refInline(n, cost int64) bool {
	return n <= 0 || parallel.Workers() <= 1 || n <= refGrain(cost)
}

package cpu

import (
	"github.com/ainekko/et/internal/ops/parallel"
)

// RefParallel calls fn on disjoint chunks [lo, hi) covering [0, n),
// through parallel.For, with chunks of at least about 32K elements of work
// (cost is a rough per-item cost in elements) so small ops stay on the
// caller's goroutine.
func RefParallel(n, cost int64, fn func(lo, hi int64)) {
	parallel.For(int(n), int(refGrain(cost)), func(lo, hi int) { fn(int64(lo), int64(hi)) })
}

// RefSplit is RefParallel with each worker's rows the same from one call
// to the next (parallel.Split: the caller the first part, each helper its
// own), for the streaming element-wise ops and copies, whose rows then
// stay in the cache of the core that last wrote them. RefInline holds
// for it as for RefParallel.
func RefSplit(n, cost int64, fn func(lo, hi int64)) {
	parallel.Split(int(n), int(refGrain(cost)), func(lo, hi int) { fn(int64(lo), int64(hi)) })
}

// RefMinWork is the least work, in elements, of one refParallel chunk:
// 16K, a few µs of element-wise work, which the pool's spinning helpers
// (parallel.For) take on at once. A variable only so that FuzzCatalog can
// split small ops too: the split's chunk boundaries are code of their own,
// and big inputs starve the fuzzer.
var RefMinWork int64 = 1 << 14

// refGrain is refParallel's smallest chunk for units of cost elements.
func refGrain(cost int64) int64 {
	grain := int64(1)
	if cost > 0 && cost < RefMinWork {
		grain = RefMinWork / cost
	}
	return grain
}

// RefInline reports whether refParallel(n, cost, fn) runs fn(0, n) on the
// calling goroutine (one chunk, or one worker), as parallel.For decides:
// a caller can then call fn itself and build no closure for the workers.
func RefInline(n, cost int64) bool {
	return n <= 0 || parallel.Workers() <= 1 || n <= refGrain(cost)
}

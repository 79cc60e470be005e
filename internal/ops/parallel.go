package ops

import (
	"runtime"
	"sync"
)

// Workers is the number of goroutines the reference math uses:
// runtime.GOMAXPROCS(0).
func Workers() int { return runtime.GOMAXPROCS(0) }

// ParallelFor splits [0, n) into chunks of at least grain items and calls
// fn(lo, hi) for each chunk, on up to Workers() goroutines, returning when
// all have finished. Chunks are handed out dynamically, so uneven work
// balances; with one worker, or n <= grain, fn runs on the caller's
// goroutine. fn must be safe to call concurrently on disjoint ranges.
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	w := Workers()
	if w <= 1 || n <= grain {
		fn(0, n)
		return
	}
	// About 4 chunks per worker, never smaller than grain.
	chunk := max(grain, (n+4*w-1)/(4*w))
	nchunks := (n + chunk - 1) / chunk
	w = min(w, nchunks)
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	take := func() (int, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n {
			return 0, 0, false
		}
		lo := next
		next = min(n, next+chunk)
		return lo, next, true
	}
	work := func() {
		for {
			lo, hi, ok := take()
			if !ok {
				return
			}
			fn(lo, hi)
		}
	}
	wg.Add(w - 1)
	for i := 0; i < w-1; i++ {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

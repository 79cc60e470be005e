package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParallelFor(t *testing.T) {
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {7, 3}, {1000, 1}, {1001, 64}, {5, 0}} {
			hits := make([]int32, tc.n)
			var calls atomic.Int32
			For(tc.n, tc.grain, func(lo, hi int) {
				calls.Add(1)
				if lo >= hi {
					t.Errorf("empty chunk [%d, %d)", lo, hi)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("procs=%d n=%d: index %d visited %d times", procs, tc.n, i, h)
				}
			}
			if tc.n == 0 && calls.Load() != 0 {
				t.Errorf("n=0 called fn %d times", calls.Load())
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// For inside fn, and on several goroutines at once: the pool runs
// one job, the others start goroutines of their own; every index is
// visited once, and many small jobs in a row (the pool's fast path) too.
func TestParallelForNestedAndConcurrent(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	const outer, inner = 16, 64
	var hits [outer * inner]int32
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 50; rep++ {
				For(outer, 1, func(lo, hi int) {
					for o := lo; o < hi; o++ {
						For(inner, 1, func(a, b int) {
							for i := a; i < b; i++ {
								atomic.AddInt32(&hits[o*inner+i], 1)
							}
						})
					}
				})
			}
		}()
	}
	wg.Wait()
	for i, h := range hits {
		if h != 3*50 {
			t.Fatalf("index %d visited %d times, want %d", i, h, 3*50)
		}
	}
}

// The pool's helpers sleep after poolSpin without a job; the next job must
// wake them (or run without them) and still visit every index once, for
// jobs back to back, after a pause, and with GOMAXPROCS changed between.
func TestParallelForPoolSleepAndWake(t *testing.T) {
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	run := func(n int) {
		hits := make([]int32, n)
		For(n, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, h)
			}
		}
	}
	for rep := 0; rep < 200; rep++ {
		run(1 + rep%37)
	}
	time.Sleep(5 * poolSpin) // every helper asleep
	run(100)
	runtime.GOMAXPROCS(4)
	run(1000)
	time.Sleep(5 * poolSpin)
	runtime.GOMAXPROCS(2)
	run(1000)
}

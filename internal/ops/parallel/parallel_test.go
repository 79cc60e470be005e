package parallel

import (
	"runtime"
	"slices"
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

// Split visits every index once in w = min(GOMAXPROCS, ⌈n/grain⌉) parts
// of ⌈n/w⌉ items (the last shorter), the same parts at every call, inline
// for n <= grain or one worker; nested and concurrent calls too.
func TestSplit(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 5} {
		old := runtime.GOMAXPROCS(procs)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {7, 3}, {7, 4}, {32, 4}, {1000, 1}, {1001, 64}, {5, 0}, {4, 100}} {
			for rep := range 3 {
				hits := make([]int32, tc.n)
				var mu sync.Mutex
				parts := map[[2]int]bool{}
				Split(tc.n, tc.grain, func(lo, hi int) {
					mu.Lock()
					parts[[2]int{lo, hi}] = true
					mu.Unlock()
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&hits[i], 1)
					}
				})
				for i, h := range hits {
					if h != 1 {
						t.Fatalf("procs=%d n=%d grain=%d: index %d visited %d times", procs, tc.n, tc.grain, i, h)
					}
				}
				w := 1
				if g := max(tc.grain, 1); procs > 1 && tc.n > g {
					w = min(procs, (tc.n+g-1)/g)
				}
				want := map[[2]int]bool{}
				if tc.n > 0 {
					size := (tc.n + w - 1) / w
					for lo := 0; lo < tc.n; lo += size {
						want[[2]int{lo, min(tc.n, lo+size)}] = true
					}
				}
				if len(parts) != len(want) {
					t.Fatalf("procs=%d n=%d grain=%d call %d: parts %v, want %v", procs, tc.n, tc.grain, rep, parts, want)
				}
				for p := range want {
					if !parts[p] {
						t.Fatalf("procs=%d n=%d grain=%d call %d: parts %v, want %v", procs, tc.n, tc.grain, rep, parts, want)
					}
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	var hits [16 * 64]int32
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				Split(16, 1, func(lo, hi int) {
					for o := lo; o < hi; o++ {
						Split(64, 8, func(a, b int) {
							for i := a; i < b; i++ {
								atomic.AddInt32(&hits[o*64+i], 1)
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
			t.Fatalf("nested Split: index %d visited %d times, want %d", i, h, 3*50)
		}
	}
}

// A Split job's worker k runs part k first, then the parts after it that
// no one has claimed, in order; a worker numbered past the parts runs
// none: the claim order that keeps each part on its worker.
func TestSplitClaimOrder(t *testing.T) {
	var got [][2]int
	j := &pfJob{n: 10, chunk: 4, owned: make([]atomic.Bool, 3), fn: func(lo, hi int) { got = append(got, [2]int{lo, hi}) }}
	j.work(3)
	if len(got) != 0 || j.done.Load() != 0 {
		t.Fatalf("worker 3 of 3 parts ran %v", got)
	}
	j.work(1)
	if want := [][2]int{{4, 8}, {8, 10}, {0, 4}}; !slices.Equal(got, want) {
		t.Fatalf("worker 1 ran %v, want %v", got, want)
	}
	if j.done.Load() != 10 {
		t.Fatalf("done %d, want 10", j.done.Load())
	}
	got = nil
	j.work(0)
	if len(got) != 0 {
		t.Fatalf("worker 0 ran parts already run: %v", got)
	}
}

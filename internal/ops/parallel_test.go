package ops

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestParallelFor(t *testing.T) {
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {7, 3}, {1000, 1}, {1001, 64}, {5, 0}} {
			hits := make([]int32, tc.n)
			var calls atomic.Int32
			ParallelFor(tc.n, tc.grain, func(lo, hi int) {
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

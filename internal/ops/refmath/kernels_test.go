package refmath

import (
	"math"
	"sync"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// TestKernelsIndependent runs ops with this CPU's kernels and with the
// portable code alone (the zero Kernels) at the same time, as parallel
// tests do: each result equals the same set's result alone, so nothing
// one set runs leaks into the other (run with -race too).
func TestKernelsIndependent(t *testing.T) {
	if got := Detect(); got != Host() {
		t.Fatalf("Detect() = %+v, Host() = %+v", got, Host())
	}
	a := ops.FromF32(ops.Q8_0, []int64{256, 24}, opstest.RandVals(5, 256*24, -1, 1))
	b := ops.FromF32(ops.F32, []int64{256, 5}, opstest.RandVals(6, 256*5, -1, 1))
	x := ops.FromF32(ops.F32, []int64{4096, 3}, opstest.RandVals(7, 4096*3, -2, 2))
	run := func(ks *Kernels) [][]float32 {
		return [][]float32{
			mustOpWith(t, ks, ops.OpMulMat, []*ops.Tensor{a, b}, nil).ToF32(),
			mustOpWith(t, ks, ops.OpRMSNorm, []*ops.Tensor{x}, map[string]any{"eps": 1e-5}).ToF32(),
			mustOpWith(t, ks, ops.OpUnary, []*ops.Tensor{x}, map[string]any{"op": "silu"}).ToF32(),
		}
	}
	sets := []*Kernels{host.Load(), {}}
	want := make([][][]float32, len(sets))
	for i, ks := range sets {
		want[i] = run(ks)
	}
	var wg sync.WaitGroup
	got := make([][][][]float32, len(sets))
	for i, ks := range sets {
		got[i] = make([][][]float32, 8)
		for r := range got[i] {
			wg.Go(func() { got[i][r] = run(ks) })
		}
	}
	wg.Wait()
	for i := range sets {
		for r := range got[i] {
			for o := range want[i] {
				for j, w := range want[i][o] {
					if g := got[i][r][o][j]; math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("set %d, run %d, op %d, value %d: %g, alone %g", i, r, o, j, g, w)
					}
				}
			}
		}
	}
}

package refmath

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
	"github.com/ainekko/et/internal/ops/refmath/reftest"
)

func TestScratchPool(t *testing.T) {
	var p cpu.ScratchPool[float32]
	if b := p.Get(0); b != nil {
		t.Errorf("get(0) = %v, want nil", b)
	}
	for _, n := range []int{1, 2, 3, 4, 5, 1000, 1024, 1025} {
		b := p.Get(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("get(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b { // the whole slice is usable
			b[i] = float32(i)
		}
		p.Put(b)
	}
	// A slice given back serves a request of its class, and not one of
	// a larger class (whose user would write past it).
	big := p.Get(3000)
	big[0] = 42
	p.Put(big)
	if b := p.Get(1000); cap(b) >= 3000 {
		t.Errorf("get(1000) took the 3000-element slice (cap %d)", cap(b))
	}
	if b := p.Get(2049); unsafe.SliceData(b) != unsafe.SliceData(big) || b[0] != 42 {
		t.Logf("get(2049) did not reuse the 3000-element slice (sync.Pool may drop it)")
	}
	// A slice of any capacity may be given back: it goes to the largest
	// class it holds.
	odd := make([]float32, 100)
	p.Put(odd)
	if b := p.Get(65); len(b) != 65 || cap(b) < 65 {
		t.Errorf("get(65) after put of cap 100: len %d cap %d", len(b), cap(b))
	}
	p.Put(nil) // no-op
}

// TestScratchReuse runs each op that computes in pooled work areas
// (scratchPool, faWorks, faRowsF16C, faZWorks) on inputs of NaNs first, then on its
// case, and checks the case's output is what it was before: a work area
// read before it is written would carry the NaNs over.
func TestScratchReuse(t *testing.T) {
	// vals gives a case's values: random ones, or NaNs for the poison.
	vals := func(poison bool, seed int64, n int, lo, hi float32) []float32 {
		if !poison {
			return opstest.RandVals(seed, n, lo, hi)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.NaN())
		}
		return v
	}
	type opCase struct {
		name string
		op   ops.Op
		srcs func(poison bool) []*ops.Tensor
		raw  map[string]any
	}
	var cases []opCase
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K} {
		for _, n := range []int64{1, 3, 8} {
			cases = append(cases, opCase{fmt.Sprintf("mul_mat/%s/n=%d", typ, n), ops.OpMulMat, func(p bool) []*ops.Tensor {
				return []*ops.Tensor{ops.FromF32(typ, []int64{256, 24}, vals(p, 1, 256*24, -1, 1)), ops.FromF32(ops.F32, []int64{256, n}, vals(p, 2, int(256*n), -1, 1))}
			}, nil})
		}
	}
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		cases = append(cases, opCase{"mul_mat_id/" + typ.String(), ops.OpMulMatID, func(p bool) []*ops.Tensor {
			as := ops.FromF32(typ, []int64{64, 20, 4}, vals(p, 3, 64*20*4, -1, 1))
			b := ops.FromF32(ops.F32, []int64{64, 3, 5}, vals(p, 4, 64*3*5, -1, 1))
			return []*ops.Tensor{as, b, ops.FromInts(ops.I32, []int64{3, 5}, []int64{3, 0, 2, 1, 1, 1, 0, 2, 3, 2, 2, 2, 3, 0, 1})}
		}, nil})
	}
	cases = append(cases, opCase{"soft_max", ops.OpSoftMax, func(p bool) []*ops.Tensor {
		return []*ops.Tensor{ops.FromF32(ops.F32, []int64{100, 3, 4}, vals(p, 5, 1200, -4, 4)), ops.FromF32(ops.F16, []int64{100, 3}, vals(p, 6, 300, -1, 0))}
	}, map[string]any{"scale": 0.5}})
	const d, nq, nh, nhkv, nkv = 64, 3, 8, 2, 77
	cases = append(cases, opCase{"flash_attn_ext", ops.OpFlashAttnExt, func(p bool) []*ops.Tensor {
		q, k, v := reftest.FACase(vals(p, 71, d*nh*nq, -1, 1), vals(p, 72, d*nhkv*nkv, -1, 1), vals(p, 73, d*nhkv*nkv, -1, 1), d, nq, nh, nkv, nhkv)
		mask := reftest.FATestMask(nq, nkv)
		if p {
			mask = vals(p, 0, len(mask), 0, 0)
		}
		return []*ops.Tensor{q, k, v, ops.FromF32(ops.F16, []int64{nkv, nq}, mask)}
	}, map[string]any{"scale": 0.125}})

	for _, c := range cases {
		for _, path := range []struct {
			name         string
			z, vec, f16c bool
		}{{"all", true, true, true}, {"vec", false, true, true}, {"f16c", false, false, true}, {"scalar", false, false, false}} {
			if c.op != ops.OpFlashAttnExt && path.name != "all" {
				continue
			}
			t.Run(c.name+"/"+path.name, func(t *testing.T) {
				ks := faKernels(path.z, path.vec, path.f16c)
				srcs := c.srcs(false)
				want := mustOpWith(t, ks, c.op, srcs, c.raw).ToF32()
				poison := c.srcs(true)
				for range 4 { // on each worker
					if _, err := runOpWith(ks, c.op, poison, c.raw); err != nil {
						t.Fatal(err)
					}
				}
				got := mustOpWith(t, ks, c.op, srcs, c.raw).ToF32()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("value %d after a call on NaNs: %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// faKernels is this CPU's kernel set with the flash_attn_ext kernels on
// or off (reftest.FAKernels).
func faKernels(z, vec, f16c bool) *Kernels {
	return &Kernels{reftest.FAKernels(z, vec, f16c)}
}

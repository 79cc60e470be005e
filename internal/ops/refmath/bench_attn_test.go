package refmath

import (
	"fmt"
	"math"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// attnBenchCases are FLASH_ATTN_EXT and SOFT_MAX at the llama-3-8B shapes
// of testcases/perf/llama3-8b.txt: 32 query heads of 128 over 8 KV heads,
// a 4096-token f16 KV cache whose K and V are views of a [1024, 4096]
// cache (nb1 = 2048 bytes, nb2 = 256 bytes), a permuted q
// ([128, n, 32] with nb1 = 16384, nb2 = 512), an f16 mask [4096, n]; and
// SOFT_MAX [4096, n, 32] with a scale and an f32 mask [4096, n].
func attnBenchCases(n int64) []struct {
	name   string
	op     string
	srcs   []*ops.Tensor
	params map[string]any
} {
	const d, h, hkv, kv = 128, 32, 8, 4096
	x := func(seed int64, ne ...int64) *ops.Tensor {
		m := int64(1)
		for _, v := range ne {
			m *= v
		}
		return ops.FromF32(ops.F32, ne, opstest.RandVals(seed, int(m), -1, 1))
	}
	cache := func(seed int64) *ops.Tensor {
		c := ops.FromF32(ops.F16, []int64{d * hkv, kv}, opstest.RandVals(seed, d*hkv*kv, -1, 1))
		t, err := ops.View(c, []int64{d, kv, hkv}, []uint64{2048, 256}, 0)
		if err != nil {
			panic(err)
		}
		return t
	}
	qc := x(7, d, h, n) // [128, 32, n] as written, permuted to [128, n, 32]
	q, err := ops.Permute(qc, 0, 2, 1, 3)
	if err != nil {
		panic(err)
	}
	mask := make([]float32, kv*n) // causal over the last n positions
	for i := int64(0); i < n; i++ {
		for j := kv - n + i + 1; j < kv; j++ {
			mask[i*kv+j] = float32(math.Inf(-1))
		}
	}
	return []struct {
		name   string
		op     string
		srcs   []*ops.Tensor
		params map[string]any
	}{
		{fmt.Sprintf("FLASH_ATTN_EXT/hsk=128,kv=4096,f16/n=%d", n), "flash_attn_ext",
			[]*ops.Tensor{q, cache(8), cache(9), ops.FromF32(ops.F16, []int64{kv, n}, mask)},
			map[string]any{"scale": 0.088388}},
		{fmt.Sprintf("SOFT_MAX/[4096,n,32],mask=f32/n=%d", n), "soft_max",
			[]*ops.Tensor{x(10, kv, n, h), ops.FromF32(ops.F32, []int64{kv, n}, mask)},
			map[string]any{"scale": 0.088388}},
	}
}

// BenchmarkAttn reports ns/op and cpu-ms/op (process CPU time) of
// FLASH_ATTN_EXT at n = 1, 7 and SOFT_MAX at n = 1, 7, 32.
func BenchmarkAttn(b *testing.B) {
	for _, n := range []int64{1, 7, 32} {
		for _, c := range attnBenchCases(n) {
			if c.op == "flash_attn_ext" && n == 32 {
				continue
			}
			b.Run(c.name, func(b *testing.B) {
				info, _ := ops.Lookup(c.op)
				p, err := info.Normalize(c.params)
				if err != nil {
					b.Fatal(err)
				}
				dst, err := Compute(info, c.srcs, p)
				if err != nil {
					b.Fatal(err)
				}
				cpu0 := opstest.ProcessCPUNS()
				for b.Loop() {
					if err := Run(info, dst, c.srcs, p); err != nil {
						b.Fatal(err)
					}
				}
				if cpu0 >= 0 {
					b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
				}
			})
		}
	}
}

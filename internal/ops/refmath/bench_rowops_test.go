package refmath

import (
	"fmt"
	"os"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkRowOps runs the row and element-wise ops of a llama-3-8B layer at
// the shapes of testcases/perf/llama3-8b.txt (n = 1, 7, 32 tokens), for
// comparison with `test-backend-ops perf -b CPU --test-file
// testcases/perf/llama3-8b.txt`. SET_ROWS writes in place (dst is its
// first source, as ggml's set_rows does); CONT copies a permuted view.
// Besides ns/op each reports cpu-ms/op (process CPU time).
// ET_CPU_KERNELS=avx2 (cpu.Kernels.Limit) runs them with what an AVX2
// machine runs.
func BenchmarkRowOps(b *testing.B) {
	if name := os.Getenv("ET_CPU_KERNELS"); name != "" {
		ks, err := Detect().Limit(name)
		if err != nil {
			b.Fatal(err)
		}
		defer UseHost(Host())
		UseHost(Kernels{ks})
	}
	table := ops.FromF32(ops.Q8_0, []int64{4096, 32000}, opstest.RandVals(3, 4096*32000, -1, 1))
	cache := ops.FromF32(ops.F16, []int64{1024, 4096}, opstest.RandVals(4, 1024*4096, -1, 1))
	for _, n := range []int64{1, 7, 32} {
		pos := make([]int64, n)
		for i := range pos {
			pos[i] = int64(i + 100)
		}
		posT := ops.FromInts(ops.I32, []int64{n}, pos)
		rows := make([]int64, n)
		for i := range rows {
			rows[i] = int64(i*7919) % 32000
		}
		kv := make([]int64, n)
		for i := range kv {
			kv[i] = int64(i*13) % 4096
		}
		x := func(ne ...int64) *ops.Tensor {
			m := int64(1)
			for _, v := range ne {
				m *= v
			}
			return ops.FromF32(ops.F32, ne, opstest.RandVals(m, int(m), -1, 1))
		}
		perm, err := ops.Permute(x(128, n, 32), 0, 2, 1, 3) // [128, 32, n] with heads and tokens swapped
		if err != nil {
			b.Fatal(err)
		}
		cases := []struct {
			op, shape string
			srcs      []*ops.Tensor
			params    map[string]any
			inPlace   bool
		}{
			{"rms_norm", "[4096,n]", []*ops.Tensor{x(4096, n)}, map[string]any{"eps": 1e-5}, false},
			{"norm", "[4096,n]", []*ops.Tensor{x(4096, n)}, map[string]any{"eps": 1e-5}, false},
			{"rope", "neox[128,32,n]", []*ops.Tensor{x(128, 32, n), posT}, map[string]any{"n_dims": 128, "mode": "neox", "freq_base": 500000}, false},
			{"rope", "normal[128,32,n]", []*ops.Tensor{x(128, 32, n), posT}, map[string]any{"n_dims": 128, "mode": "normal", "freq_base": 500000}, false},
			{"add", "[4096,n]", []*ops.Tensor{x(4096, n), x(4096, n)}, nil, false},
			{"mul", "[4096,n]x[4096]", []*ops.Tensor{x(4096, n), x(4096)}, nil, false},
			{"glu", "swiglu[14336,n]", []*ops.Tensor{x(14336, n), x(14336, n)}, map[string]any{"op": "swiglu"}, false},
			{"unary", "silu[14336,n]", []*ops.Tensor{x(14336, n)}, map[string]any{"op": "silu"}, false},
			{"cpy", "f32->f16[128,8,n]", []*ops.Tensor{x(128, 8, n)}, map[string]any{"type": "f16"}, false},
			{"cont", "permuted[128,32,n]", []*ops.Tensor{perm}, nil, false},
			{"get_rows", "q8_0[4096,32000]", []*ops.Tensor{table, ops.FromInts(ops.I32, []int64{n}, rows)}, nil, false},
			{"set_rows", "f16[1024,4096]", []*ops.Tensor{cache, x(1024, n), ops.FromInts(ops.I64, []int64{n}, kv)}, nil, true},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%s/n=%d", c.op, c.shape, n), func(b *testing.B) {
				info, ok := ops.Lookup(c.op)
				if !ok {
					b.Fatalf("no op %s", c.op)
				}
				p, err := info.Normalize(c.params)
				if err != nil {
					b.Fatal(err)
				}
				dst := c.srcs[0]
				if !c.inPlace {
					if dst, err = Compute(info, c.srcs, p); err != nil {
						b.Fatal(err)
					}
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

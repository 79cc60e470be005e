package refmath

import (
	"fmt"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkLlama runs the ops of a llama-3-8B decoder layer at the shapes of
// issue 13 (4096 wide, 32 heads of 128, 8 KV heads, FFN 14336, vocabulary
// 32000 for GET_ROWS, n tokens), for comparison with
// `test-backend-ops perf -b CPU` (docs/performance.md). MUL_MAT is
// BenchmarkMulMat. Each sub-benchmark is OP/shape/n=N; besides ns/op it
// reports cpu-ms/op (process CPU time), steadier on a shared machine.
func BenchmarkLlama(b *testing.B) {
	table := ops.FromF32(ops.Q8_0, []int64{4096, 32000}, opstest.RandVals(3, 4096*32000, -1, 1))
	for _, n := range []int64{1, 7, 32, 512} {
		pos := make([]int64, n)
		for i := range pos {
			pos[i] = int64(i)
		}
		posT := ops.FromInts(ops.I32, []int64{n}, pos)
		rows := make([]int64, n)
		for i := range rows {
			rows[i] = int64(i*7919) % 32000
		}
		x := func(ne ...int64) *ops.Tensor {
			m := int64(1)
			for _, v := range ne {
				m *= v
			}
			return ops.FromF32(ops.F32, ne, opstest.RandVals(int64(m), int(m), -1, 1))
		}
		cases := []struct {
			op, shape string
			srcs      []*ops.Tensor
			params    map[string]any
		}{
			{"rms_norm", "[4096,n]", []*ops.Tensor{x(4096, n)}, map[string]any{"eps": 1e-5}},
			{"norm", "[4096,n]", []*ops.Tensor{x(4096, n)}, map[string]any{"eps": 1e-5}},
			{"soft_max", "[4096,n,32]", []*ops.Tensor{x(4096, n, 32)}, map[string]any{"scale": 0.088}},
			{"rope", "neox[128,32,n]", []*ops.Tensor{x(128, 32, n), posT}, map[string]any{"n_dims": 128, "mode": "neox", "freq_base": 500000}},
			{"get_rows", "q8_0[4096,32000]", []*ops.Tensor{table, ops.FromInts(ops.I32, []int64{n}, rows)}, nil},
			{"glu", "swiglu[14336,n]", []*ops.Tensor{x(14336, n), x(14336, n)}, map[string]any{"op": "swiglu"}},
			{"add", "[4096,n]", []*ops.Tensor{x(4096, n), x(4096, n)}, nil},
			{"mul", "[4096,n]x[4096]", []*ops.Tensor{x(4096, n), x(4096)}, nil},
			{"cpy", "f32->f16[128,8,n]", []*ops.Tensor{x(128, 8, n)}, map[string]any{"type": "f16"}},
			{"unary", "silu[14336,n]", []*ops.Tensor{x(14336, n)}, map[string]any{"op": "silu"}},
		}
		if n == 1 {
			// One query against a 4096-token f16 KV cache, 32 heads over 8.
			cases = append(cases, struct {
				op, shape string
				srcs      []*ops.Tensor
				params    map[string]any
			}{"flash_attn_ext", "hsk=128,kv=4096,nb=1", []*ops.Tensor{
				x(128, 1, 32),
				ops.FromF32(ops.F16, []int64{128, 4096, 8}, opstest.RandVals(5, 128*4096*8, -1, 1)),
				ops.FromF32(ops.F16, []int64{128, 4096, 8}, opstest.RandVals(6, 128*4096*8, -1, 1)),
				ops.FromF32(ops.F16, []int64{4096, 1}, make([]float32, 4096)),
			}, map[string]any{"scale": 0.088}})
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
				dst, err := Compute(info, c.srcs, p)
				if err != nil {
					b.Fatal(err)
				}
				var bytes int64
				for _, s := range c.srcs {
					bytes += int64(s.NBytes())
				}
				if c.op == "get_rows" {
					bytes = 2 * int64(dst.NBytes()) // the rows read, not the table
				}
				b.SetBytes(bytes + int64(dst.NBytes()))
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

// BenchmarkGGMLPerfShapes runs ops at shapes that `test-backend-ops perf
// -b CPU` has in its perf list (which has no RMS_NORM, GET_ROWS or
// FLASH_ATTN_EXT cases), for a like-for-like comparison.
func BenchmarkGGMLPerfShapes(b *testing.B) {
	pos := make([]int64, 512)
	for i := range pos {
		pos[i] = int64(i)
	}
	cases := []struct {
		name   string
		op     string
		srcs   []*ops.Tensor
		params map[string]any
	}{
		// SOFT_MAX(type=f32,ne=[1024,1024,10,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0)
		{"SOFT_MAX/ne=[1024,1024,10,1]", "soft_max", []*ops.Tensor{ops.FromF32(ops.F32, []int64{1024, 1024, 10}, opstest.RandVals(1, 1024*1024*10, -4, 4))}, map[string]any{"scale": 1}},
		// ROPE(type=f32,ne_a=[128,32,512,1],n_dims=128,mode=0,...,ff=0,v=0)
		{"ROPE/ne_a=[128,32,512,1],mode=0", "rope", []*ops.Tensor{ops.FromF32(ops.F32, []int64{128, 32, 512}, opstest.RandVals(2, 128*32*512, -1, 1)), ops.FromInts(ops.I32, []int64{512}, pos)}, map[string]any{"n_dims": 128, "mode": "normal", "freq_base": 10000}},
	}
	for _, c := range cases {
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

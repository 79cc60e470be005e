package mulmat

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkMulMatLlama measures MulMat at the llama-3-8B FFN-down shape of
// testcases/perf/llama3-8b.txt (m = 4096, k = 14336) for every weight
// type there and n = 1, 2, 7, 32, 512 columns. Reproduce with
//
//	GOEXPERIMENT=simd go test -run '^$' -bench BenchmarkMulMatLlama -benchtime 5x ./internal/ops
//
// n = 512 is slow (tens of GFLOP): -bench 'MulMatLlama/.*/n=(1|2|7|32)$'
// skips it. cpu-ms/op is the process CPU time per op.
func BenchmarkMulMatLlama(b *testing.B) {
	const m, k = 4096, 14336
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K, ops.Q6_K} {
		a := benchWeights2(typ, k, m)
		for _, n := range []int64{1, 2, 7, 32, 512} {
			b.Run(fmt.Sprintf("%s/n=%d", typ, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(7, 8))
				x := ops.FromF32(ops.F32, []int64{k, n}, opstest.RandF32(r, int(k*n)))
				dst := ops.New(ops.F32, m, n)
				benchLoop(b, float64(2*m*k*n), func() error { return host.MulMat(dst, a, x) })
			})
		}
	}
}

// BenchmarkMulMatIDLlama measures MUL_MAT_ID at the MoE shape of the test
// file: 32 experts of [2048 → 1792], 4 used per token, n tokens.
func BenchmarkMulMatIDLlama(b *testing.B) {
	const k, m, nAs, nUsed = 2048, 1792, 32, 4
	for _, typ := range []ops.Type{ops.Q4_0, ops.Q8_0} {
		as := benchWeights2(typ, k, m*nAs)
		as.Ne[1], as.Ne[2] = m, nAs
		as.Nb[2] = as.Nb[1] * m
		as.Nb[3] = as.Nb[2] * nAs
		for _, n := range []int64{1, 7, 32} {
			b.Run(fmt.Sprintf("%s/n=%d", typ, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(9, 10))
				x := ops.FromF32(ops.F32, []int64{k, nUsed, n}, opstest.RandF32(r, int(k*nUsed*n)))
				idv := make([]int64, nUsed*n)
				for t := range n {
					perm := r.Perm(nAs)
					for e := range int64(nUsed) {
						idv[t*nUsed+e] = int64(perm[e])
					}
				}
				ids := ops.FromInts(ops.I32, []int64{nUsed, n}, idv)
				dst := ops.New(ops.F32, m, nUsed, n)
				srcs := []*ops.Tensor{as, x, ids}
				benchLoop(b, float64(2*k*m*nUsed*n), func() error { return host.RefMulMatID(dst, srcs, nil) })
			})
		}
	}
}

func benchLoop(b *testing.B, flop float64, f func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := opstest.ProcessCPUNS()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu0 >= 0 {
		b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
	b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// benchWeights2 is benchWeights, also for q6_K (its f16 scale is the
// block's last two bytes).
func benchWeights2(t ops.Type, k, m int64) *ops.Tensor {
	if t != ops.Q6_K {
		return benchWeights(t, k, m)
	}
	x := ops.New(t, k, m)
	r := rand.New(rand.NewPCG(uint64(k), uint64(m)))
	for i := 0; i+8 <= len(x.Buf); i += 8 {
		binary.LittleEndian.PutUint64(x.Buf[i:], r.Uint64())
	}
	ts := t.TypeSize()
	scale := ops.F32ToF16(0.001)
	for off := 0; off < len(x.Buf); off += ts {
		binary.LittleEndian.PutUint16(x.Buf[off+ts-2:], scale)
	}
	return x
}

// BenchmarkMulMatL2 runs MulMat on weights that stay in the L2 cache (128
// rows of 4096), reporting CPU ns per (row, column) dot product: the
// kernels' compute cost without DRAM bandwidth. Run it with -cpu 1.
func BenchmarkMulMatL2(b *testing.B) {
	const m, k = 128, 4096
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K, ops.Q6_K} {
		a := benchWeights2(typ, k, m)
		for _, n := range []int64{1, 2, 7, 32} {
			b.Run(fmt.Sprintf("%s/n=%d", typ, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(7, 8))
				x := ops.FromF32(ops.F32, []int64{k, n}, opstest.RandF32(r, int(k*n)))
				dst := ops.New(ops.F32, m, n)
				cpu0 := opstest.ProcessCPUNS()
				for b.Loop() {
					if err := host.MulMat(dst, a, x); err != nil {
						b.Fatal(err)
					}
				}
				if cpu0 >= 0 {
					b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/float64(m*n), "cpu-ns/dot")
				}
			})
		}
	}
}

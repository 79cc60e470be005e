package mulmat

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/opstest"
)

// benchWeights makes an m×k src0 of type t with random contents, filled
// directly (quantizing 58M values would dominate the benchmark's setup):
// random quants with every f16 scale set to a small positive value.
func benchWeights(t ops.Type, k, m int64) *ops.Tensor {
	x := ops.New(t, k, m)
	r := rand.New(rand.NewPCG(uint64(k), uint64(m)))
	switch t {
	case ops.F32:
		for i := 0; i+4 <= len(x.Buf); i += 4 {
			binary.LittleEndian.PutUint32(x.Buf[i:], math.Float32bits(r.Float32()*2-1))
		}
		return x
	case ops.F16:
		for i := 0; i+2 <= len(x.Buf); i += 2 {
			binary.LittleEndian.PutUint16(x.Buf[i:], ops.F32ToF16(r.Float32()*2-1))
		}
		return x
	}
	for i := 0; i+8 <= len(x.Buf); i += 8 {
		binary.LittleEndian.PutUint64(x.Buf[i:], r.Uint64())
	}
	ts := t.TypeSize()
	scale := ops.F32ToF16(0.01)
	for off := 0; off < len(x.Buf); off += ts {
		binary.LittleEndian.PutUint16(x.Buf[off:], scale)
		if t == ops.Q4_K {
			binary.LittleEndian.PutUint16(x.Buf[off+2:], scale)
		}
	}
	return x
}

// BenchmarkMulMat measures MulMat at llama-3-8B shapes. Reproduce with
//
//	go test -run '^$' -bench BenchmarkMulMat -benchtime 20x ./internal/ops
//
// and with GOEXPERIMENT=simd in front for the vector kernels.
// Besides ns/op (wall clock) it reports cpu-ms/op, the process CPU time
// per op, which stays meaningful when other work shares the machine.
func BenchmarkMulMat(b *testing.B) {
	shapes := []struct{ m, k, n int64 }{
		{4096, 4096, 1},
		{4096, 4096, 64},
		{4096, 14336, 1},
	}
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K} {
		for _, s := range shapes {
			b.Run(fmt.Sprintf("%s/m=%d,k=%d,n=%d", typ, s.m, s.k, s.n), func(b *testing.B) {
				a := benchWeights(typ, s.k, s.m)
				r := rand.New(rand.NewPCG(7, 8))
				x := ops.FromF32(ops.F32, []int64{s.k, s.n}, opstest.RandF32(r, int(s.k*s.n)))
				dst := ops.New(ops.F32, s.m, s.n)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := opstest.ProcessCPUNS()
				for b.Loop() {
					if err := host.MulMat(dst, a, x); err != nil {
						b.Fatal(err)
					}
				}
				if cpu0 >= 0 {
					b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
				}
				b.ReportMetric(float64(2*s.m*s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}

func BenchmarkQuantizeRow(b *testing.B) {
	x := opstest.RandF32(rand.New(rand.NewPCG(1, 1)), 4096)
	for _, typ := range []ops.Type{ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K} {
		b.Run(typ.String(), func(b *testing.B) {
			dst := make([]byte, typ.RowSize(4096))
			b.SetBytes(4096 * 4)
			for b.Loop() {
				ops.QuantizeRow(typ, x, dst)
			}
		})
	}
}

// BenchmarkMulMatInCache runs MulMat on weights small enough to stay in
// the L2 cache (256 rows of 1024), so it measures the row kernels rather
// than memory bandwidth. Run it with -cpu 1:
//
//	go test -run '^$' -bench BenchmarkMulMatInCache -cpu 1 ./internal/ops
func BenchmarkMulMatInCache(b *testing.B) {
	const m, k = 256, 1024
	for _, typ := range []ops.Type{ops.F32, ops.F16, ops.Q8_0, ops.Q4_0, ops.Q4_K} {
		for _, n := range []int64{1, 4} {
			b.Run(fmt.Sprintf("%s/n=%d", typ, n), func(b *testing.B) {
				a := benchWeights(typ, k, m)
				r := rand.New(rand.NewPCG(7, 8))
				x := ops.FromF32(ops.F32, []int64{k, n}, opstest.RandF32(r, int(k*n)))
				dst := ops.New(ops.F32, m, n)
				for b.Loop() {
					if err := host.MulMat(dst, a, x); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m*n), "ns/row")
			})
		}
	}
}

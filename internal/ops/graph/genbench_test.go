package graph

import (
	"fmt"
	"testing"

	"github.com/ainekko/et/internal/ops/opstest"

	"github.com/ainekko/et/internal/ops"
)

// BenchmarkFill generates (and quantizes) one 4096-value row per op, on
// one goroutine: the per-value cost of each init and type, for normal
// through each Box-Muller kernel this CPU has (pairs per pass: 8 AVX-512,
// 4 AVX2, 0 scalar).
func BenchmarkFill(b *testing.B) {
	for _, tc := range []struct {
		name, init string
		typ        ops.Type
	}{
		{"uniform-f32", "uniform(-1, 1)", ops.F32},
		{"normal-f32", "normal(0, 1)", ops.F32},
		{"normal-q8_0", "normal(0, 0.02)", ops.Q8_0},
		{"normal-q4_0", "normal(0, 0.02)", ops.Q4_0},
	} {
		kernels := []int{normalPairs}
		if tc.init[:6] == "normal" {
			kernels = normalKernels()
		}
		for _, pairs := range kernels {
			b.Run(fmt.Sprintf("%s/pairs=%d", tc.name, pairs), func(b *testing.B) {
				in, _ := ParseInit(tc.init)
				row := make([]float32, 4096)
				dst := make([]byte, tc.typ.RowSize(4096))
				b.SetBytes(4096 * 4)
				i := int64(0)
				for b.Loop() {
					fillF32With(pairs, in, 1, i, row)
					ops.QuantizeRow(tc.typ, row, dst)
					i += 4096
				}
			})
		}
	}
}

// BenchmarkQuantizeRow quantizes one 4096-value row of normal(0, 0.02)
// values (llama-3-8B's hidden size) per op into a reused row: the
// quantizer alone, without page faults.
func BenchmarkQuantizeRow(b *testing.B) {
	in, _ := ParseInit("normal(0, 0.02)")
	row := make([]float32, 4096)
	fillF32(in, 1, 0, row)
	for _, typ := range []ops.Type{ops.Q8_0, ops.Q4_0} {
		b.Run(typ.String(), func(b *testing.B) {
			dst := make([]byte, typ.RowSize(4096))
			b.SetBytes(4096 * 4)
			for b.Loop() {
				ops.QuantizeRow(typ, row, dst)
			}
		})
	}
}

// BenchmarkMaterializeLlamaLayer generates the inputs of
// testcases/llama_layer_4096.yaml (one llama-3-8B decoder layer: ~218M
// values, q8_0 and q4_0 weights), on parallel.Workers() goroutines. cpu-ms/op
// is the process CPU time, steadier than ns/op on a shared machine.
func BenchmarkMaterializeLlamaLayer(b *testing.B) {
	c, err := Load("../../../testcases/llama_layer_4096.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := opstest.ProcessCPUNS()
	for b.Loop() {
		if _, err := Materialize(c); err != nil {
			b.Fatal(err)
		}
	}
	if cpu0 >= 0 {
		b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

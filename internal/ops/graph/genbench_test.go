package graph

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// BenchmarkFill generates (and quantizes) one 4096-value row per op, on
// one goroutine: the per-value cost of each init and type.
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
		b.Run(tc.name, func(b *testing.B) {
			in, _ := ParseInit(tc.init)
			row := make([]float32, 4096)
			dst := make([]byte, tc.typ.RowSize(4096))
			b.SetBytes(4096 * 4)
			i := int64(0)
			for b.Loop() {
				fillF32(in, 1, i, row)
				ops.QuantizeRow(tc.typ, row, dst)
				i += 4096
			}
		})
	}
}

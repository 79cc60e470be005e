package graph

import (
	"testing"

	"github.com/ainekko/et/internal/ops"
)

// BenchmarkMaterialize fills a llama-3-8B-sized q8_0 weight (4096x4096).
func BenchmarkMaterialize(b *testing.B) {
	for _, tc := range []struct {
		name string
		typ  ops.Type
		init string
	}{
		{"f32-uniform", ops.F32, "uniform(-1, 1)"},
		{"q8_0-normal", ops.Q8_0, "normal(0, 0.02)"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in, _ := ParseInit(tc.init)
			c := &Case{Tensors: []TensorSpec{{Name: "w", Type: tc.typ, Ne: []int64{4096, 4096}, Init: in}}}
			b.SetBytes(4096 * 4096 * 4)
			for b.Loop() {
				if _, err := Materialize(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

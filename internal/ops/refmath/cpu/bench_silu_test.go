package cpu

import (
	"testing"

	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkSiluKernel runs the silu and swiglu row kernels alone on the
// llama-3-8B feed-forward width (14336), one row per op: the per-element
// cost without the op's dispatch (see BenchmarkRowOps for whole ops). Its
// instruction count under callgrind is a deterministic comparison.
func BenchmarkSiluKernel(b *testing.B) {
	const n = 14336
	x, g := opstest.RandVals(31, n, -8, 8), opstest.RandVals(32, n, -1, 1)
	dst := make([]float32, n)
	b.Run("silu", func(b *testing.B) {
		cpu0 := opstest.ProcessCPUNS()
		for b.Loop() {
			host.SiluRow(dst, x)
		}
		b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("swiglu", func(b *testing.B) {
		cpu0 := opstest.ProcessCPUNS()
		for b.Loop() {
			host.SwigluRow(dst, x, g)
		}
		b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	})
}

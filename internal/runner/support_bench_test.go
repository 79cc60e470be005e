package runner

import (
	"context"
	"testing"

	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/opstest"
)

// BenchmarkSupportAll is et ops support without cases: every eval case
// string of test-backend-ops parsed, built and planned (no tensor data).
// docs/performance.md records it beside /usr/bin/time of the command.
func BenchmarkSupportAll(b *testing.B) {
	b.ReportAllocs()
	cpu0 := opstest.ProcessCPUNS()
	for b.Loop() {
		v, bad, total, err := Support(context.Background(), Sources{}, abi.Default())
		if err != nil || len(bad) > 0 {
			b.Fatal(err, bad)
		}
		if len(v) != total {
			b.Fatalf("%d verdicts of %d cases", len(v), total)
		}
	}
	if cpu0 >= 0 {
		b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

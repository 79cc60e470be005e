//go:build goexperiment.simd && amd64

package cpu

import (
	"testing"
)

// TestF32ToF16RowInt checks the integer vector conversion (CPUs without
// F16C) against F32ToF16.
func TestF32ToF16RowInt(t *testing.T) {
	if !host.Row {
		t.Skip("no AVX2")
	}
	checkF32ToF16Row(t, "f32ToF16RowInt", f32ToF16RowInt)
}

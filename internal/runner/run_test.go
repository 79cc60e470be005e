package runner

import (
	"encoding/json"
	"math"
	"testing"
)

// TestFinite: run-op's JSON never carries NaN or ±Inf (an output the
// kernel never wrote gives an infinite NMSE), which encoding/json refuses.
func TestFinite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in, out float64
	}{
		{"nan", math.NaN(), 0},
		{"+inf", math.Inf(1), math.MaxFloat64},
		{"-inf", math.Inf(-1), -math.MaxFloat64},
		{"finite", 0.25, 0.25},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := finite(tt.in)
			if got != tt.out {
				t.Errorf("finite(%v) = %v, want %v", tt.in, got, tt.out)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Error(err)
			}
		})
	}
}

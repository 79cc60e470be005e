//go:build goexperiment.simd && amd64

package mulmat

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// TestWidenF16x8 checks the vector f16 widening against F16ToF32 on all
// 65536 halves, bit for bit (NaN payloads included).
func TestWidenF16x8(t *testing.T) {
	if !host.Vec {
		t.Skip("CPU without AVX2")
	}
	keep, expo, inf, scale := cpu.F16Consts()
	var in [16]byte
	var out [8]float32
	for h := 0; h < 1<<16; h += 8 {
		for j := 0; j < 8; j++ {
			binary.LittleEndian.PutUint16(in[2*j:], uint16(h+j))
		}
		cpu.WidenF16x8(unsafe.Pointer(&in[0]), 0, keep, expo, inf, scale).Store(&out)
		for j, got := range out {
			if want := ops.F16ToF32(uint16(h + j)); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("widen(%#04x) = %#08x, want %#08x", h+j, math.Float32bits(got), math.Float32bits(want))
			}
		}
	}
}

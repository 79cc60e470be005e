//go:build !amd64

package cpu

import (
	"github.com/ainekko/et/internal/ops"
)

// Dot8F is the dots of eight f16 or f32 rows with b (the amd64 build's
// assembly): never called here.
func Dot8F(ops.Type, *[8][]byte, []float32) [8]float32 { panic("unreachable") }

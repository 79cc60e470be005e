//go:build !amd64

package cpu

import (
	"github.com/ainekko/et/internal/ops"
)

func Dot8F(ops.Type, *[8][]byte, []float32) [8]float32 { panic("unreachable") }

package mulmat

import "github.com/ainekko/et/internal/ops/refmath/cpu"

// Kernels is the kernel set MUL_MAT and MUL_MAT_ID run with; refmath's
// Kernels converts to it.
type Kernels struct{ cpu.Kernels }

package attn

import "github.com/ainekko/et/internal/ops/refmath/cpu"

// Kernels is the kernel set SOFT_MAX and FLASH_ATTN_EXT run with;
// refmath's Kernels converts to it.
type Kernels struct{ cpu.Kernels }

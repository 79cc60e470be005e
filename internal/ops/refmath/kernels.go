package refmath

import (
	"github.com/ainekko/et/internal/ops/refmath/cpu"
)

// Kernels is the kernel set (cpu.Kernels) the reference math runs with:
// every op whose math has CPU kernels is a method of *Kernels, and so are
// Run, Compute, Ref and Bind. The families' packages (mulmat, attn) have
// a Kernels of their own with the same fields; a *Kernels converts to
// theirs.
type Kernels struct{ cpu.Kernels }

// Detect is this CPU's kernel set (cpu.Detect).
func Detect() Kernels { return Kernels{cpu.Detect()} }

// host is this CPU's kernel set, detected once; the package's Run,
// Compute, Ref and Bind use it. Nothing changes it.
var host = func() *Kernels { ks := Detect(); return &ks }()

// Host is this CPU's kernel set (a copy: changing it changes nothing
// else).
func Host() Kernels { return *host }

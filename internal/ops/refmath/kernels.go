package refmath

import (
	"sync/atomic"

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

// host is the kernel set the package's Run, Compute, Ref and Bind use:
// this CPU's, detected once, unless UseHost set another.
var host atomic.Pointer[Kernels]

func init() {
	ks := Detect()
	host.Store(&ks)
}

// Host is the kernel set of Run, Compute, Ref and Bind (a copy: changing
// it changes nothing else).
func Host() Kernels { return *host.Load() }

// UseHost makes ks the kernel set of Run, Compute, Ref and Bind from now
// on (a command calls it once, before any op runs, to force a smaller
// set: cpu.Kernels.Limit). A Ref or Bind looked up before keeps the set
// it was looked up with.
func UseHost(ks Kernels) { host.Store(&ks) }

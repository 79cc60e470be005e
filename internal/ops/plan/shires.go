package plan

import (
	"fmt"
	"math/bits"

	"github.com/ainekko/et/internal/kernelmap"
)

// FullShireMask selects all 32 compute shires: the mask ggml-et passes to
// every launch (reference/ggml-et-backend.md §1).
const FullShireMask uint32 = 0xFFFFFFFF

// NeedsAllShires reports whether a kernel assumes all 32 compute shires:
// the matrix-engine kernels of the kernel catalog leave part of their
// output unwritten, with no error, when launched on fewer
// (reference/et-driver-and-sysemu.md §9).
func NeedsAllShires(kernel string) bool {
	k, ok := kernelmap.LookupKernel(kernel)
	return ok && k.MatrixEngine
}

// CheckShireMask checks a compute shire mask a user asks launches to use:
// at least one shire, and contiguous, because kernels number their
// threads from the lowest shire of the mask and assume the rest follow
// (reference/ggml-et-backend.md §3: thread_id = hart_id - ctz(mask)*64,
// num_threads = popcount(mask)*64).
func CheckShireMask(mask uint32) error {
	if mask == 0 {
		return fmt.Errorf("shire mask 0x0 selects no compute shire")
	}
	low := mask >> bits.TrailingZeros32(mask)
	if low&(low+1) != 0 {
		return fmt.Errorf("shire mask %#x is not contiguous: kernels number their threads from the lowest shire and assume the others follow it", mask)
	}
	return nil
}

// launchMask is the mask a launch of kernel uses when the plan asks for
// mask, and the note that says why the plan's mask was refused.
func launchMask(kernel string, mask uint32) (uint32, string) {
	if mask != FullShireMask && NeedsAllShires(kernel) {
		return FullShireMask, fmt.Sprintf("shire mask %#x refused: %s uses the matrix engine and needs all 32 shires (a smaller mask leaves part of the output unwritten); launched with %#x", mask, kernel, FullShireMask)
	}
	return mask, ""
}

// SegmentMask is the shire mask of a launch segment (steps, by index): the
// union of its steps' masks, so that an uberkernel batch holding a kernel
// that needs all shires is launched on all of them.
func (p *Plan) SegmentMask(seg []int) uint32 {
	var m uint32
	for _, si := range seg {
		m |= p.Steps[si].ShireMask
	}
	if m == 0 {
		return FullShireMask
	}
	return m
}

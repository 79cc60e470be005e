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
// the kernels of the kernel catalog with an AllShires reason (the
// matrix-engine ones, reference/et-driver-and-sysemu.md §9, those that
// index rows by absolute hart id and those that wait at a barrier across
// all shires) leave part of their output unwritten or hang when launched
// on fewer.
func NeedsAllShires(kernel string) bool {
	return AllShiresReason(kernel) != ""
}

// AllShiresReason is why kernel needs all 32 compute shires, or "" when it
// splits its work over the launched shires.
func AllShiresReason(kernel string) string {
	k, _ := kernelmap.LookupKernel(kernel)
	return k.AllShires
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
// mask, and the note that says why the plan's mask was refused (or that
// it was forced on a kernel that needs all shires).
func launchMask(kernel string, mask uint32, force bool) (uint32, string) {
	why := AllShiresReason(kernel)
	switch {
	case mask == FullShireMask || why == "":
		return mask, ""
	case force:
		return mask, fmt.Sprintf("shire mask %#x forced: %s %s", mask, kernel, why)
	}
	return FullShireMask, fmt.Sprintf("shire mask %#x refused: %s %s; launched with %#x", mask, kernel, why, FullShireMask)
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

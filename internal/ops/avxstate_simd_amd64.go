//go:build goexperiment.simd && amd64

package ops

import (
	"simd/archsimd"
)

// ClearUpper executes VZEROUPPER (on CPUs with AVX).
//
// In GOEXPERIMENT=simd builds (Go 1.26) the runtime's asyncPreempt saves
// and restores the full vector registers (YMM, or ZMM with AVX-512) and
// returns to the preempted goroutine without a VZEROUPPER. Go's scalar
// float code is legacy-SSE encoded, and with the upper halves dirty it
// runs an order of magnitude slower (soft_max, 95% in math.Exp, was 40x
// slower than in the default build) until some vector kernel happens to
// execute VZEROUPPER. (GODEBUG=asyncpreemptoff=1 avoids it too, but is
// not a //go:debug setting a program can fix.) Tensor.Row and SetRow,
// which every row-based op calls per row, call clearUpper, and the exp
// loops of soft_max and flash_attn_ext more often, so a preemption costs
// at most about a row of slow work.
func ClearUpper() {
	if archsimd.X86.AVX() {
		archsimd.ClearAVXUpperBits()
	}
}

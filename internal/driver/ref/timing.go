package ref

import "github.com/ainekko/et/internal/driver"

// The timing model: a simple roofline, not a measurement. A launch takes
//
//	LaunchOverheadCycles + insts·InstOverheadCycles
//	  + max(⌈flops / FlopsPerCycle⌉, ⌈bytes / bytes-per-cycle⌉)
//
// cycles of the minion clock, where bytes-per-cycle is the DDR bandwidth
// over the clock (128000 MB/s at 1000 MHz: 128 bytes per cycle), flops are
// counted for mul_mat and flash_attn_ext only (as test-backend-ops does)
// and bytes are the nbytes of every tensor the kernel reads or writes
// (the size for memops). insts is the number of uberkernel instructions.
const (
	// FlopsPerCycle is the f32 vector peak of 32 compute shires × 32
	// minions × 8 lanes × 2 (fused multiply-add).
	FlopsPerCycle = 32 * 32 * 8 * 2
	// LaunchOverheadCycles is a round figure for the command-queue round
	// trip of one kernel launch (10 µs at 1 GHz).
	LaunchOverheadCycles = 10000
	// InstOverheadCycles is the global barrier before each uberkernel
	// instruction.
	InstOverheadCycles = 1000
)

// Cost is the work of one launch.
type Cost struct {
	Flops int64
	Bytes int64
}

func (c *Cost) add(o Cost) {
	c.Flops += o.Flops
	c.Bytes += o.Bytes
}

// Cycles is the simulated duration of a launch of cost c with insts
// uberkernel instructions on a device with props p.
func Cycles(p driver.Props, c Cost, insts int) uint64 {
	freq := uint64(max(p.FrequencyMHz, 1))
	bw := uint64(p.MemoryBandwidthMBps)
	if bw == 0 {
		bw = 128000
	}
	var compute, memory uint64
	if c.Flops > 0 {
		compute = (uint64(c.Flops) + FlopsPerCycle - 1) / FlopsPerCycle
	}
	if c.Bytes > 0 {
		// bytes / (bw MB/s / freq MHz) = bytes·freq / bw.
		memory = (uint64(c.Bytes)*freq + bw - 1) / bw
	}
	return LaunchOverheadCycles + uint64(insts)*InstOverheadCycles + max(compute, memory)
}

// LaunchRecord is one launch with its simulated device time. Cycles
// accumulate across launches: StartCycle of a launch is EndCycle of the
// previous one.
type LaunchRecord struct {
	Kernel     string
	StartCycle uint64
	EndCycle   uint64
	// ParamsSize is the size of the launch args in bytes.
	ParamsSize int
	// Insts lists the kernels an uberkernel launch ran, in order (nil for
	// a direct launch).
	Insts []string
}

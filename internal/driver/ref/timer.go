package ref

import "github.com/ainekko/et/internal/driver"

// The DMA model of the reference device, like its launch model a round
// figure, not a measurement: a host↔device copy is one DMA command of
// DMAOverheadCycles + ⌈n / DMABytesPerCycle⌉ cycles (4 GB/s at 1 GHz, the
// order of the DMA rate in the runtime trace reference sample).
const (
	DMAOverheadCycles = 1000
	DMABytesPerCycle  = 4
)

var _ driver.Timer = (*Device)(nil)

// LaunchTimings returns the simulated device cycles of the launches from
// the from-th on (see Launches).
func (d *Device) LaunchTimings(from int) []driver.LaunchTiming {
	d.mu.Lock()
	defer d.mu.Unlock()
	if from < 0 {
		from = 0
	}
	if from >= d.records.n {
		return nil
	}
	out := make([]driver.LaunchTiming, 0, d.records.n-from)
	for _, r := range d.records.from(from) {
		out = append(out, driver.LaunchTiming{Kernel: r.Kernel, StartCycle: r.StartCycle, EndCycle: r.EndCycle})
	}
	return out
}

// CopyCycles is the simulated duration of a DMA copy of n bytes.
func (d *Device) CopyCycles(n uint64) uint64 {
	return DMAOverheadCycles + (n+DMABytesPerCycle-1)/DMABytesPerCycle
}

package runner

import "github.com/ainekko/et/internal/driver"

// The ET-SoC-1 figures efficiency is measured against (docs/performance-sysemu.md,
// "Peak figures"): et-platform's sys_emu models 32 minions per compute
// shire (sw-sysemu/emu_defines.h EMU_MINIONS_PER_SHIRE) and vector
// registers of VL = 8 single-precision lanes (256 bits, emu_defines.h
// VL), with a packed FMADD among the PS instructions. A minion is taken
// to issue one 8-lane FMA (16 FLOPs) per cycle.
const (
	MinionsPerShire = 32
	VectorLanesF32  = 8
	// PeakFlopsPerMinionCycle is one 8-lane FMA a cycle.
	PeakFlopsPerMinionCycle = 2 * VectorLanesF32
)

// Efficiency is a launch's work per device cycle against the peak of the
// shires it ran on: FLOPs against PeakFlopsPerMinionCycle × 32 minions ×
// shires, bytes against the device's DRAM bandwidth per cycle (its
// memory_bandwidth over its frequency, a chip-wide figure).
type Efficiency struct {
	FlopsPerCycle     float64 `json:"flops_per_cycle"`
	BytesPerCycle     float64 `json:"bytes_per_cycle"`
	PeakFlopsPerCycle float64 `json:"peak_flops_per_cycle"`
	// PeakBytesPerCycle is 0 when the device does not give its bandwidth.
	PeakBytesPerCycle float64 `json:"peak_bytes_per_cycle"`
	// FlopsPct and BytesPct are the fractions of the peaks in percent;
	// PeakPct is the larger, and Bound says which ("compute" or "memory").
	FlopsPct float64 `json:"flops_pct"`
	BytesPct float64 `json:"bytes_pct"`
	PeakPct  float64 `json:"peak_pct"`
	Bound    string  `json:"bound"`
}

// efficiency is t's efficiency on a device with props, nil without
// cycles.
func efficiency(t *Timing, props driver.Props) *Efficiency {
	if t.MedCycles == 0 {
		return nil
	}
	c := float64(t.MedCycles)
	e := &Efficiency{FlopsPerCycle: float64(t.Flops) / c, BytesPerCycle: float64(t.Bytes) / c,
		PeakFlopsPerCycle: float64(PeakFlopsPerMinionCycle * MinionsPerShire * max(t.Shires, 1))}
	e.FlopsPct = 100 * e.FlopsPerCycle / e.PeakFlopsPerCycle
	if props.MemoryBandwidthMBps > 0 && props.FrequencyMHz > 0 {
		e.PeakBytesPerCycle = float64(props.MemoryBandwidthMBps) / float64(props.FrequencyMHz)
		e.BytesPct = 100 * e.BytesPerCycle / e.PeakBytesPerCycle
	}
	e.PeakPct, e.Bound = e.FlopsPct, "compute"
	if e.BytesPct > e.FlopsPct {
		e.PeakPct, e.Bound = e.BytesPct, "memory"
	}
	return e
}

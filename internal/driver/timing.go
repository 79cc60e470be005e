package driver

// LaunchTiming is the device time of one kernel launch, in device cycles
// of the minion clock (Props.FrequencyMHz).
type LaunchTiming struct {
	Kernel     string
	StartCycle uint64
	EndCycle   uint64
}

// Timer is implemented by devices that model device time (the reference
// device's simulated cycles). Trace recorders use it, through a type
// assertion, for the device cycles of a runtime-format trace; devices
// without it are timed on the host clock.
type Timer interface {
	// LaunchTimings returns the timings of the launches from the from-th
	// (0-based, in launch order) to the latest, including launches whose
	// kernel faulted.
	LaunchTimings(from int) []LaunchTiming
	// CopyCycles is the device time of one DMA command copying n bytes
	// between host and device.
	CopyCycles(n uint64) uint64
}

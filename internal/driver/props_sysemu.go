package driver

// SysemuDRAMBase is the device address of the host-managed DRAM region on
// sys_emu and on hardware (HOST_MANAGED_DRAM_START): reference
// et-driver-and-sysemu.md §2.1.
const SysemuDRAMBase = 0x8005801000

// SysemuDRAMBytes is the host-managed DRAM size for a DDR size in bytes:
// DDR minus the region below SysemuDRAMBase, rounded down to 2 MiB.
func SysemuDRAMBytes(ddrBytes uint64) uint64 {
	const below = SysemuDRAMBase - 0x8000000000
	if ddrBytes <= below {
		return 0
	}
	return (ddrBytes - below) &^ (2<<20 - 1)
}

// SysemuProps are the properties a sys_emu device reports, known before it
// boots: the hard-coded DeviceSysEmu values, plus the shire mask and DRAM
// region it is expected to report once booted with sys_emu's default 16 GiB
// of DRAM. The fields named in SysemuAssumed are those expectations.
func SysemuProps() Props {
	p := FakeProps()
	p.MemoryBytes = SysemuDRAMBytes(16 << 30)
	p.DRAMBase = SysemuDRAMBase
	return p
}

// SysemuAssumed returns the JSON names of the SysemuProps fields that come
// from the booted firmware and are therefore expected, not verified, until
// the emulator boots.
func SysemuAssumed() []string {
	return []string{"compute_shire_mask", "available_shires", "memory_bytes", "dram_base"}
}

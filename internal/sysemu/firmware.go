package sysemu

// FirmwareFile is one firmware ELF the emulator preloads, with where it
// must be linked (reference et-driver-and-sysemu.md §4.2).
type FirmwareFile struct {
	// ID is the check id ("firmware.bl2").
	ID string
	// Path is relative to the prefix (one of FirmwareFiles).
	Path string
	Spec ELFSpec
}

const (
	kib = 1 << 10
	mib = 1 << 20
)

// Address regions from the firmware linker scripts.
var (
	regionROM       = Region{Name: "SP ROM", Lo: 0x40000000, Hi: 0x40000000 + 64*kib}
	regionSPSRAM    = Region{Name: "SP SRAM", Lo: 0x40400000, Hi: 0x404DC000}
	regionBL2Code   = Region{Name: "BL2 code", Lo: 0x40400000, Hi: 0x40474800}
	regionMCode     = Region{Name: "MCODE", Lo: 0x8000000000, Hi: 0x8000000000 + 2*mib}
	regionMData     = Region{Name: "MDATA", Lo: 0x8000200000, Hi: 0x8000200000 + 6*mib}
	regionMMSCode   = Region{Name: "MasterMinion SCODE", Lo: 0x8000800000, Hi: 0x8000800000 + 4*mib}
	regionMMSData   = Region{Name: "MasterMinion SDATA", Lo: 0x8001000000, Hi: 0x8001000000 + 4*mib}
	regionWMSCode   = Region{Name: "WorkerMinion SCODE", Lo: 0x8000C00000, Hi: 0x8000C00000 + 4*mib}
	regionWMSData   = Region{Name: "WorkerMinion SDATA", Lo: 0x8001400000, Hi: 0x8001400000 + 4*mib}
	spResetPC       = Region{Name: "SP reset PC", Lo: 0x40000000, Hi: 0x40000000 + 1}
	minionResetPC   = Region{Name: "minion reset PC", Lo: 0x8000001000, Hi: 0x8000001000 + 1}
	firmwareOrdered = []FirmwareFile{
		{ID: "firmware.bootrom", Path: FirmwareFiles[0], Spec: ELFSpec{Kind: KindFirmware, Entry: spResetPC, Load: []Region{regionROM}}},
		{ID: "firmware.bl2", Path: FirmwareFiles[1], Spec: ELFSpec{Kind: KindFirmware, Entry: regionBL2Code, Load: []Region{regionSPSRAM}}},
		{ID: "firmware.machine_minion", Path: FirmwareFiles[2], Spec: ELFSpec{Kind: KindFirmware, Entry: minionResetPC, Load: []Region{regionMCode, regionMData}}},
		{ID: "firmware.master_minion", Path: FirmwareFiles[3], Spec: ELFSpec{Kind: KindFirmware, Entry: regionMMSCode, Load: []Region{regionMMSCode, regionMMSData}}},
		{ID: "firmware.worker_minion", Path: FirmwareFiles[4], Spec: ELFSpec{Kind: KindFirmware, Entry: regionWMSCode, Load: []Region{regionWMSCode, regionWMSData}}},
	}
)

// Firmware returns the five firmware files in boot order (the order of
// FirmwareFiles), with their check ids and ELF specs.
func Firmware() []FirmwareFile {
	out := make([]FirmwareFile, len(firmwareOrdered))
	copy(out, firmwareOrdered)
	return out
}

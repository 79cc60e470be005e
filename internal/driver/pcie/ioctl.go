package pcie

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/ainekko/et/internal/driver"
)

// ioctl magic of the ET driver (et_ioctl.h).
const ioctlMagic = 0xE7

// Linux _IOC directions (asm-generic/ioctl.h, used by x86-64, arm64 and
// riscv64).
const (
	iocWrite = 1
	iocRead  = 2
)

// ioc computes a Linux ioctl request number as the _IOC macro does.
func ioc(dir, typ, nr, size uint32) uint32 {
	return dir<<30 | size<<16 | typ<<8 | nr
}

// Sizes of the ioctl arguments.
const (
	dramInfoSize  = 24
	devConfigSize = 32
	// PCINameSize is the buffer size et passes to GET_PCIBUS_DEVICE_NAME.
	PCINameSize = 32
)

// The read-only info ioctls et issues (reference §1.3). Nothing else is
// ever sent to a device.
var (
	ReqGetUserDRAMInfo       = ioc(iocRead, ioctlMagic, 1, dramInfoSize)
	ReqGetSQCount            = ioc(iocRead, ioctlMagic, 3, 2)
	ReqGetSQMaxMsgSize       = ioc(iocRead, ioctlMagic, 4, 2)
	ReqGetDeviceConfig       = ioc(iocRead, ioctlMagic, 5, devConfigSize)
	ReqGetDeviceState        = ioc(iocRead, ioctlMagic, 13, 4)
	ReqGetPCIBusDeviceName   = ioc(iocRead, ioctlMagic, 14, PCINameSize)
	ReqGetP2PDMACompatBitmap = ioc(iocRead, ioctlMagic, 15, 8)
)

// argSize returns the argument size encoded in a request number.
func argSize(req uint32) int { return int(req >> 16 & 0x3FFF) }

// DeviceState is the value of GET_DEVICE_STATE.
type DeviceState uint32

// The device states of the ET driver.
const (
	StateNotReady        DeviceState = 0
	StateReady           DeviceState = 1
	StateResetInProgress DeviceState = 2
	StateNotResponding   DeviceState = 3
	StatePendingCommands DeviceState = 4
)

func (s DeviceState) String() string {
	switch s {
	case StateNotReady:
		return "not-ready"
	case StateReady:
		return "ready"
	case StateResetInProgress:
		return "reset-in-progress"
	case StateNotResponding:
		return "not-responding"
	case StatePendingCommands:
		return "pending-commands"
	}
	return fmt.Sprintf("unknown(%d)", uint32(s))
}

// Usable reports whether the runtime accepts a device in this state
// (DevicePcie requires Ready or PendingCommands).
func (s DeviceState) Usable() bool { return s == StateReady || s == StatePendingCommands }

// DevConfig is struct dev_config as GET_DEVICE_CONFIGURATION returns it
// (32 bytes, little-endian). Sizes are in KiB, as the driver reports them.
type DevConfig struct {
	TotalL3KB        uint32
	TotalL2KB        uint32
	TotalScratchKB   uint32
	DDRBandwidthMBps uint32
	MinionBootMHz    uint32
	CMShireMask      uint32
	FormFactor       uint8
	TDPW             uint8
	CacheLineBytes   uint8
	NumL2CacheBanks  uint8
	SyncMinShireID   uint8
	ArchRev          uint8
	Devnum           uint8
}

// DecodeDevConfig decodes a dev_config buffer.
func DecodeDevConfig(b []byte) (DevConfig, error) {
	if len(b) < devConfigSize {
		return DevConfig{}, fmt.Errorf("dev_config: %d bytes, want %d", len(b), devConfigSize)
	}
	le := binary.LittleEndian
	return DevConfig{
		TotalL3KB:        le.Uint32(b[0:]),
		TotalL2KB:        le.Uint32(b[4:]),
		TotalScratchKB:   le.Uint32(b[8:]),
		DDRBandwidthMBps: le.Uint32(b[12:]),
		MinionBootMHz:    le.Uint32(b[16:]),
		CMShireMask:      le.Uint32(b[20:]),
		FormFactor:       b[24],
		TDPW:             b[25],
		CacheLineBytes:   b[26],
		NumL2CacheBanks:  b[27],
		SyncMinShireID:   b[28],
		ArchRev:          b[29],
		Devnum:           b[30],
	}, nil
}

// Encode is the inverse of DecodeDevConfig (used by the fake).
func (c DevConfig) Encode() []byte {
	b := make([]byte, devConfigSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], c.TotalL3KB)
	le.PutUint32(b[4:], c.TotalL2KB)
	le.PutUint32(b[8:], c.TotalScratchKB)
	le.PutUint32(b[12:], c.DDRBandwidthMBps)
	le.PutUint32(b[16:], c.MinionBootMHz)
	le.PutUint32(b[20:], c.CMShireMask)
	b[24], b[25], b[26], b[27] = c.FormFactor, c.TDPW, c.CacheLineBytes, c.NumL2CacheBanks
	b[28], b[29], b[30] = c.SyncMinShireID, c.ArchRev, c.Devnum
	return b
}

// FormFactorName maps form_factor to et's names (0 is invalid); unknown
// values give "".
func FormFactorName(ff uint8) string {
	switch ff {
	case 1:
		return "pcie"
	case 2:
		return "m2"
	}
	return ""
}

// Props converts the configuration to device properties the way
// RuntimeImp::doGetDeviceProperties does (sizes from KiB to bytes,
// available shires = popcount of the mask). Memory and DRAM base come from
// DRAMInfo and are left zero.
func (c DevConfig) Props() driver.Props {
	return driver.Props{
		FrequencyMHz:        c.MinionBootMHz,
		ComputeShireMask:    c.CMShireMask,
		AvailableShires:     uint32(bits.OnesCount32(c.CMShireMask)),
		CacheLineBytes:      uint32(c.CacheLineBytes),
		L2Bytes:             uint64(c.TotalL2KB) << 10,
		L3Bytes:             uint64(c.TotalL3KB) << 10,
		ScratchpadBytes:     uint64(c.TotalScratchKB) << 10,
		MemoryBandwidthMBps: c.DDRBandwidthMBps,
		L2CacheBanks:        uint32(c.NumL2CacheBanks),
		SpareShireID:        uint32(c.SyncMinShireID),
		Arch:                driver.ArchName(int(c.ArchRev)),
		FormFactor:          FormFactorName(c.FormFactor),
		TDPW:                uint32(c.TDPW),
	}
}

// DRAMInfo is struct dram_info as GET_USER_DRAM_INFO returns it (24 bytes,
// little-endian): the host-managed DRAM region.
type DRAMInfo struct {
	Base            uint64
	SizeBytes       uint64
	DMAMaxElemBytes uint32
	DMAMaxElemCount uint16
	AlignInBits     uint16
}

// DecodeDRAMInfo decodes a dram_info buffer.
func DecodeDRAMInfo(b []byte) (DRAMInfo, error) {
	if len(b) < dramInfoSize {
		return DRAMInfo{}, fmt.Errorf("dram_info: %d bytes, want %d", len(b), dramInfoSize)
	}
	le := binary.LittleEndian
	return DRAMInfo{
		Base:            le.Uint64(b[0:]),
		SizeBytes:       le.Uint64(b[8:]),
		DMAMaxElemBytes: le.Uint32(b[16:]),
		DMAMaxElemCount: le.Uint16(b[20:]),
		AlignInBits:     le.Uint16(b[22:]),
	}, nil
}

// Encode is the inverse of DecodeDRAMInfo (used by the fake).
func (d DRAMInfo) Encode() []byte {
	b := make([]byte, dramInfoSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], d.Base)
	le.PutUint64(b[8:], d.SizeBytes)
	le.PutUint32(b[16:], d.DMAMaxElemBytes)
	le.PutUint16(b[20:], d.DMAMaxElemCount)
	le.PutUint16(b[22:], d.AlignInBits)
	return b
}

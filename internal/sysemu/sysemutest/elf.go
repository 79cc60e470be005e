package sysemutest

import (
	"bytes"
	"encoding/binary"
)

// ELF constants used by the builder.
const (
	EMX8664   = 62
	EMAArch64 = 183
	EMRISCV   = 243

	ETExec = 2
	ETDyn  = 3

	PTLoad = 1
	PTNote = 4

	SHTProgbits = 1
	SHTNobits   = 8
	SHFWrite    = 0x1
	SHFAlloc    = 0x2
	SHFExec     = 0x4
)

// Segment is one program header. Off 0 means "place it after the previous
// segment, 4 KiB aligned", and the builder writes Filesz bytes of data.
type Segment struct {
	Type              uint32
	Flags             uint32
	Off, Vaddr, Paddr uint64
	Filesz, Memsz     uint64
}

// Section is one section header (name, type, flags, address, size);
// the builder adds .shstrtab.
type Section struct {
	Name  string
	Type  uint32
	Flags uint64
	Addr  uint64
	Size  uint64
}

// ELF describes a tiny ELF64 file.
type ELF struct {
	// Class is 2 (ELFCLASS64) unless set; Data is 1 (little-endian)
	// unless set.
	Class, Data byte
	Machine     uint16
	Type        uint16
	Flags       uint32
	Entry       uint64
	Segments    []Segment
	Sections    []Section
}

// Bytes encodes e.
func (e ELF) Bytes() []byte {
	class, data := e.Class, e.Data
	if class == 0 {
		class = 2
	}
	if data == 0 {
		data = 1
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data == 2 {
		bo = binary.BigEndian
	}
	const ehsize, phentsize, shentsize = 64, 56, 64
	phoff := uint64(ehsize)
	end := phoff + uint64(len(e.Segments))*phentsize
	segs := make([]Segment, len(e.Segments))
	copy(segs, e.Segments)
	next := (end + 0xfff) &^ 0xfff
	for i := range segs {
		if segs[i].Type == 0 {
			segs[i].Type = PTLoad
		}
		if segs[i].Off == 0 {
			segs[i].Off = next
		}
		if e := segs[i].Off + segs[i].Filesz; e > end {
			end = e
		}
		next = (end + 0xfff) &^ 0xfff
	}
	buf := make([]byte, end)
	for _, s := range segs {
		for j := s.Off; j < s.Off+s.Filesz; j++ {
			buf[j] = byte(j)
		}
	}
	// Section names and headers.
	var shoff uint64
	var shnum, shstrndx uint16
	if len(e.Sections) > 0 {
		strtab := []byte{0}
		nameOff := make([]uint32, len(e.Sections)+1)
		for i, s := range e.Sections {
			nameOff[i] = uint32(len(strtab))
			strtab = append(strtab, s.Name...)
			strtab = append(strtab, 0)
		}
		nameOff[len(e.Sections)] = uint32(len(strtab))
		strtab = append(strtab, ".shstrtab\x00"...)
		strOff := uint64(len(buf))
		buf = append(buf, strtab...)
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		shoff = uint64(len(buf))
		sh := make([]byte, shentsize) // index 0: SHN_UNDEF
		buf = append(buf, sh...)
		for i, s := range e.Sections {
			sh := make([]byte, shentsize)
			bo.PutUint32(sh[0:], nameOff[i])
			bo.PutUint32(sh[4:], s.Type)
			bo.PutUint64(sh[8:], s.Flags)
			bo.PutUint64(sh[16:], s.Addr)
			bo.PutUint64(sh[24:], 0x1000) // offset
			bo.PutUint64(sh[32:], s.Size)
			bo.PutUint64(sh[48:], 1) // addralign
			if s.Type == SHTNobits {
				bo.PutUint64(sh[24:], 0)
			}
			buf = append(buf, sh...)
		}
		sh = make([]byte, shentsize)
		bo.PutUint32(sh[0:], nameOff[len(e.Sections)])
		bo.PutUint32(sh[4:], 3) // SHT_STRTAB
		bo.PutUint64(sh[24:], strOff)
		bo.PutUint64(sh[32:], uint64(len(strtab)))
		bo.PutUint64(sh[48:], 1)
		buf = append(buf, sh...)
		shnum = uint16(len(e.Sections) + 2)
		shstrndx = shnum - 1
	}
	h := buf[:ehsize]
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = class, data, 1
	bo.PutUint16(h[16:], e.Type)
	bo.PutUint16(h[18:], e.Machine)
	bo.PutUint32(h[20:], 1)
	bo.PutUint64(h[24:], e.Entry)
	bo.PutUint64(h[32:], phoff)
	bo.PutUint64(h[40:], shoff)
	bo.PutUint32(h[48:], e.Flags)
	bo.PutUint16(h[52:], ehsize)
	bo.PutUint16(h[54:], phentsize)
	bo.PutUint16(h[56:], uint16(len(segs)))
	bo.PutUint16(h[58:], shentsize)
	bo.PutUint16(h[60:], shnum)
	bo.PutUint16(h[62:], shstrndx)
	for i, s := range segs {
		p := buf[phoff+uint64(i)*phentsize:]
		bo.PutUint32(p[0:], s.Type)
		bo.PutUint32(p[4:], s.Flags)
		bo.PutUint64(p[8:], s.Off)
		bo.PutUint64(p[16:], s.Vaddr)
		bo.PutUint64(p[24:], s.Paddr)
		bo.PutUint64(p[32:], s.Filesz)
		bo.PutUint64(p[40:], s.Memsz)
		bo.PutUint64(p[48:], 0x1000)
	}
	return bytes.Clone(buf)
}

// RV64 returns a valid RV64 lp64f (e_flags 0x3, RVC + single) ET_EXEC with
// a code segment at code (the entry) and a data segment at data.
func RV64(code, data uint64) ELF {
	return ELF{
		Machine: EMRISCV, Type: ETExec, Flags: 0x3, Entry: code,
		Segments: []Segment{
			{Flags: 5, Vaddr: code, Paddr: code, Filesz: 0x200, Memsz: 0x200},
			{Flags: 6, Vaddr: data, Paddr: data, Filesz: 0x40, Memsz: 0x80},
		},
		Sections: []Section{
			{Name: ".text", Type: SHTProgbits, Flags: SHFAlloc | SHFExec, Addr: code, Size: 0x200},
			{Name: ".data", Type: SHTProgbits, Flags: SHFAlloc | SHFWrite, Addr: data, Size: 0x40},
		},
	}
}

// KernelBase is the kernel link address (KERNEL_UMODE_ENTRY).
const KernelBase = 0x8005801000

// Kernel returns a valid compute kernel: rv64imf lp64f (e_flags 0x2),
// linked at KernelBase, two PT_LOADs with paddr − offset = KernelBase −
// 0x1000, no .bss.
func Kernel() ELF {
	return ELF{
		Machine: EMRISCV, Type: ETExec, Flags: 0x2, Entry: KernelBase,
		Segments: []Segment{
			{Flags: 5, Off: 0x1000, Vaddr: KernelBase, Paddr: KernelBase, Filesz: 0x300, Memsz: 0x300},
			{Flags: 6, Off: 0x2000, Vaddr: KernelBase + 0x1000, Paddr: KernelBase + 0x1000, Filesz: 0x80, Memsz: 0x80},
		},
		Sections: []Section{
			{Name: ".text.init", Type: SHTProgbits, Flags: SHFAlloc | SHFExec, Addr: KernelBase, Size: 0x300},
			{Name: ".data", Type: SHTProgbits, Flags: SHFAlloc | SHFWrite, Addr: KernelBase + 0x1000, Size: 0x80},
		},
	}
}

// Firmware files, relative to the prefix, in boot order, with a valid ELF
// for each (restating reference et-driver-and-sysemu.md §3.5 and §4.2).
var Firmware = []struct {
	Path string
	ELF  ELF
}{
	{"lib/esperanto-fw/BootromTrampolineToBL2/BootromTrampolineToBL2.elf", RV64(0x40000000, 0x40008000)},
	{"lib/esperanto-fw/ServiceProcessorBL2/fast-boot/ServiceProcessorBL2_fast-boot.elf", RV64(0x40400000, 0x40480000)},
	{"lib/esperanto-fw/MachineMinion/MachineMinion.elf", RV64(0x8000001000, 0x8000200000)},
	{"lib/esperanto-fw/MasterMinion/MasterMinion.elf", RV64(0x8000800000, 0x8001000000)},
	{"lib/esperanto-fw/WorkerMinion/WorkerMinion.elf", RV64(0x8000C00000, 0x8001400000)},
}

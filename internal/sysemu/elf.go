package sysemu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ELFKind says what an ELF is for. It decides the extra checks and what a
// problem would do at run time.
type ELFKind int

// The kinds of ELF an install holds.
const (
	// KindFirmware is one of the five firmware ELFs the emulator preloads.
	KindFirmware ELFKind = iota + 1
	// KindKernel is a compute kernel passed to the runtime's loadCode.
	KindKernel
)

// KernelBase is the link address of ET compute kernels: KERNEL_UMODE_ENTRY,
// ggml's BASE_ADDRESS (reference et-driver-and-sysemu.md §4.2). The
// runtime loads a kernel wherever mallocDevice puts it, so the checks do
// not require it.
const KernelBase = 0x8005801000

// Region is the address range [Lo, Hi).
type Region struct {
	// Name says what the range is ("SP ROM", "SCODE").
	Name   string
	Lo, Hi uint64
}

// exact reports whether the region is a single address.
func (r Region) exact() bool { return r.Hi == r.Lo+1 }

// fits reports whether [lo, lo+size) lies inside r.
func (r Region) fits(lo, size uint64) bool {
	return lo >= r.Lo && lo <= r.Hi && size <= r.Hi-lo
}

func (r Region) String() string {
	if r.exact() {
		return fmt.Sprintf("%s 0x%x", r.Name, r.Lo)
	}
	return fmt.Sprintf("%s [0x%x, 0x%x)", r.Name, r.Lo, r.Hi)
}

// ELFSpec is what an ELF must look like. Every spec requires a 64-bit
// little-endian RISC-V ET_EXEC with the single-float ABI and at least one
// non-empty PT_LOAD (reference §4.2).
type ELFSpec struct {
	Kind ELFKind
	// Entry is where e_entry must be (a one-address region for an exact
	// entry). The zero Region means "not checked".
	Entry Region
	// Load lists where the PT_LOAD segments may lie: each segment with
	// memsz > 0 must fit in one of them by physical (load) or virtual
	// address. Empty means "not checked".
	Load []Region
}

// KernelSpec is the spec of an ET compute-kernel ELF, judged as the
// runtime's loadCode treats it (reference §4.2): the segments it loads
// (type bit 0 set, memsz > 0; empty ones are skipped) have memsz ≥ filesz
// (a larger memsz is zero-filled, which is legal), share p_paddr −
// p_offset, and fit the buffer it allocates; the entry lies in the file
// bytes of a loaded executable segment. Neither the link address nor the
// absence of .bss is required.
var KernelSpec = ELFSpec{Kind: KindKernel}

// Problem is one reason an ELF (or any install file) is wrong.
type Problem struct {
	// Code is a stable short name: missing, not_regular, unreadable,
	// empty, not_elf, truncated, class, endian, version, malformed,
	// machine, type, float_abi, no_load, memsz, entry, load_range,
	// paddr_offset, buffer.
	Code string
	// Msg says what is wrong, with the values found.
	Msg string
	// Effect says what the emulator or runtime would do with the file.
	Effect string
}

func (p Problem) String() string {
	if p.Effect == "" {
		return p.Msg
	}
	return p.Msg + " -> " + p.Effect
}

// ELFInfo is what was read from a valid-enough ELF header.
type ELFInfo struct {
	// SizeBytes is the file size.
	SizeBytes int64
	Class     elf.Class
	Data      elf.Data
	Machine   elf.Machine
	Type      elf.Type
	Flags     uint32
	Entry     uint64
	// Loads is the number of segments loaded: PT_LOADs with memsz > 0
	// (for a kernel, any type with bit 0 set, as loadCode does).
	Loads int
	// ZeroFill is, for a kernel, the bytes loadCode zero-fills after the
	// file bytes of its segments (memsz − filesz: .bss and the like).
	ZeroFill uint64
}

// Summary is a one-line description such as
// "RV64 EXEC lp64f (e_flags 0x3), entry 0x40000000, 1 PT_LOAD, 5312 bytes".
func (i ELFInfo) Summary() string {
	arch := i.Machine.String()
	if i.Machine == elf.EM_RISCV {
		arch = "RV64"
		if i.Class == elf.ELFCLASS32 {
			arch = "RV32"
		}
	}
	typ := strings.TrimPrefix(i.Type.String(), "ET_")
	s := fmt.Sprintf("%s %s", arch, typ)
	if i.Machine == elf.EM_RISCV {
		s += fmt.Sprintf(" %s (e_flags 0x%x)", floatABI(i.Flags), i.Flags)
	}
	s += fmt.Sprintf(", entry 0x%x, %d PT_LOAD, %d bytes", i.Entry, i.Loads, i.SizeBytes)
	if i.ZeroFill > 0 {
		s += fmt.Sprintf(" (+%d zero-filled)", i.ZeroFill)
	}
	return s
}

// floatABI names the RISC-V float ABI in ELF flags.
func floatABI(flags uint32) string {
	switch flags & 0x6 {
	case 0x0:
		return "lp64"
	case 0x2:
		return "lp64f"
	case 0x4:
		return "lp64d"
	default:
		return "lp64q"
	}
}

// CheckELF checks the file at path against spec: it exists, is a regular,
// readable, non-empty file, and is an ELF of the right kind. It never
// opens a non-regular file (a FIFO would block). No problems means the file
// passed.
func CheckELF(path string, spec ELFSpec) (ELFInfo, []Problem) {
	f, size, p := openRegular(path, spec.Kind)
	if p != nil {
		return ELFInfo{}, []Problem{*p}
	}
	defer f.Close()
	return CheckELFData(f, size, spec)
}

// openRegular opens path if it is a non-empty regular file, or returns the
// problem.
func openRegular(path string, kind ELFKind) (*os.File, int64, *Problem) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			msg := "missing"
			if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(path)
				msg = fmt.Sprintf("missing: dangling symlink to %s", target)
			}
			return nil, 0, problem(kind, "missing", msg)
		}
		return nil, 0, problem(kind, "unreadable", "cannot stat: "+errText(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, problem(kind, "not_regular", "not a regular file ("+modeKind(fi.Mode())+")")
	}
	if fi.Size() == 0 {
		return nil, 0, problem(kind, "empty", "empty file (0 bytes)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, problem(kind, "unreadable", "cannot read: "+errText(err))
	}
	return f, fi.Size(), nil
}

// errText is the innermost message of a path error ("permission denied").
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func modeKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

const elf64HeaderSize = 64

// CheckELFData checks size bytes read from r against spec. It handles any
// input, including files debug/elf rejects, with a precise reason.
func CheckELFData(r io.ReaderAt, size int64, spec ELFSpec) (ELFInfo, []Problem) {
	info := ELFInfo{SizeBytes: size}
	kind := spec.Kind
	one := func(code, msg string) (ELFInfo, []Problem) {
		return info, []Problem{*problem(kind, code, msg)}
	}
	if size <= 0 {
		return one("empty", "empty file (0 bytes)")
	}
	head := make([]byte, min(size, 512))
	n, err := r.ReadAt(head, 0)
	if n < len(head) {
		return one("unreadable", fmt.Sprintf("cannot read the first %d bytes: %v", len(head), err))
	}
	if len(head) < 4 || !bytes.Equal(head[:4], []byte(elf.ELFMAG)) {
		return one("not_elf", "not an ELF file: "+describeNonELF(head))
	}
	if len(head) < 7 {
		return one("truncated", fmt.Sprintf("truncated ELF header: %d bytes, an ELF64 header needs %d", size, elf64HeaderSize))
	}
	switch c := elf.Class(head[elf.EI_CLASS]); c {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		return one("class", "32-bit ELF (ELFCLASS32), want ELFCLASS64")
	default:
		return one("class", fmt.Sprintf("invalid ELF class %d, want ELFCLASS64", c))
	}
	info.Class = elf.ELFCLASS64
	switch d := elf.Data(head[elf.EI_DATA]); d {
	case elf.ELFDATA2LSB:
	case elf.ELFDATA2MSB:
		return one("endian", "big-endian ELF (ELFDATA2MSB), want little-endian")
	default:
		return one("endian", fmt.Sprintf("invalid ELF data encoding %d, want little-endian", d))
	}
	info.Data = elf.ELFDATA2LSB
	if v := head[elf.EI_VERSION]; v != byte(elf.EV_CURRENT) {
		return one("version", fmt.Sprintf("ELF version %d, want 1 (EV_CURRENT)", v))
	}
	if size < elf64HeaderSize {
		return one("truncated", fmt.Sprintf("truncated ELF header: %d bytes, an ELF64 header needs %d", size, elf64HeaderSize))
	}
	le := binary.LittleEndian
	phoff, shoff := le.Uint64(head[32:]), le.Uint64(head[40:])
	phentsize, phnum := uint64(le.Uint16(head[54:])), uint64(le.Uint16(head[56:]))
	shentsize, shnum := uint64(le.Uint16(head[58:])), uint64(le.Uint16(head[60:]))
	if end, ok := tableEnd(phoff, phentsize, phnum); !ok || end > uint64(size) {
		return one("truncated", fmt.Sprintf("truncated: the program headers end at byte %s, the file has %d bytes", endText(end, ok), size))
	}
	if end, ok := tableEnd(shoff, shentsize, shnum); !ok || end > uint64(size) {
		return one("truncated", fmt.Sprintf("truncated: the section headers end at byte %s, the file has %d bytes", endText(end, ok), size))
	}
	f, err := elf.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return one("malformed", "malformed ELF: "+strings.TrimPrefix(err.Error(), "elf: "))
	}
	// debug/elf does not expose e_flags (offset 48 in an ELF64 header).
	flags := le.Uint32(head[48:])
	info.Machine, info.Type, info.Flags, info.Entry = f.Machine, f.Type, flags, f.Entry

	var ps []Problem
	add := func(code, format string, args ...any) {
		ps = append(ps, *problem(kind, code, fmt.Sprintf(format, args...)))
	}
	if f.Machine != elf.EM_RISCV {
		add("machine", "machine %s (e_machine %d), want EM_RISCV (243)", machineName(f.Machine), uint16(f.Machine))
	} else if flags&0x6 != 0x2 {
		add("float_abi", "%s float ABI (e_flags 0x%x), want single-float lp64f (e_flags & 0x6 == 0x2)", floatABI(flags), flags)
	}
	if f.Type != elf.ET_EXEC {
		add("type", "type %s, want ET_EXEC (static, non-PIE)", f.Type)
	}

	// Segments. For firmware, count the PT_LOADs that hold something.
	// For kernels, judge them as the runtime's loadCode does (reference
	// §4.2): it copies every segment whose type has bit 0 set and whose
	// memsz is not 0, and skips the empty ones.
	var loads []int
	for i, p := range f.Progs {
		if kind == KindKernel && p.Type&elf.PT_LOAD != 0 && p.Memsz > 0 ||
			kind != KindKernel && p.Type == elf.PT_LOAD && p.Memsz > 0 {
			loads = append(loads, i)
		}
	}
	info.Loads = len(loads)
	for i, p := range f.Progs {
		if p.Type&elf.PT_LOAD == 0 {
			continue
		}
		if p.Memsz < p.Filesz && (p.Memsz > 0 || kind != KindKernel) {
			add("memsz", "segment %d: memsz %d < filesz %d", i, p.Memsz, p.Filesz)
		}
		if end, ok := tableEnd(p.Off, 1, p.Filesz); !ok || end > uint64(size) {
			add("truncated", "truncated: segment %d needs file bytes up to %s, the file has %d", i, endText(end, ok), size)
		}
	}
	if len(loads) == 0 {
		if kind == KindKernel {
			add("no_load", "no loadable segment with memsz > 0")
		} else {
			add("no_load", "no PT_LOAD segment with memsz > 0")
		}
	}
	if e := spec.Entry; e.Hi > e.Lo && !e.fits(f.Entry, 1) {
		if e.exact() {
			add("entry", "entry 0x%x, want 0x%x (%s)", f.Entry, e.Lo, e.Name)
		} else {
			add("entry", "entry 0x%x outside %s", f.Entry, e)
		}
	}
	if len(spec.Load) > 0 {
		var bad []string
		for i, p := range f.Progs {
			if p.Type != elf.PT_LOAD || p.Memsz == 0 || inRegions(spec.Load, p) {
				continue
			}
			bad = append(bad, fmt.Sprintf("segment %d at 0x%x-0x%x (paddr 0x%x)", i, p.Vaddr, p.Vaddr+p.Memsz, p.Paddr))
		}
		if len(bad) > 0 {
			names := make([]string, len(spec.Load))
			for i, r := range spec.Load {
				names[i] = r.String()
			}
			add("load_range", "%s outside %s", strings.Join(bad, ", "), strings.Join(names, " and "))
		}
	}
	if kind == KindKernel && len(loads) > 0 {
		ps = append(ps, checkKernelLayout(f, loads, uint64(size), &info)...)
	}
	return info, ps
}

// MaxDeviceMemory is the device memory a kernel's code buffer must fit
// in: the host-managed DRAM of sys_emu's default 16 GiB
// (driver.SysemuDRAMBytes; a card's 32 GiB holds no kernel this refuses
// that could run anywhere else).
const MaxDeviceMemory = 17085497344

func allocText(n uint64, wrapped bool) string {
	if wrapped {
		return "over 2^64"
	}
	return fmt.Sprint(n)
}

// checkKernelLayout checks the loaded segments of a kernel ELF the way
// RuntimeImp::doLoadCode lays them out (reference §4.2): it allocates the
// file size plus memsz − filesz of every PT_LOAD, copies segment i to
// buffer + p_offset(i) and zero-fills its tail, and starts the harts at
// buffer + e_entry − (p_paddr − p_offset) of the first loaded segment. It
// records the zero-filled bytes in info.
func checkKernelLayout(f *elf.File, loads []int, size uint64, info *ELFInfo) []Problem {
	var ps []Problem
	add := func(code, format string, args ...any) {
		ps = append(ps, *problem(KindKernel, code, fmt.Sprintf(format, args...)))
	}
	first := f.Progs[loads[0]]
	base := first.Paddr - first.Off
	// The allocation, with the runtime's unsigned arithmetic.
	alloc := size
	wrapped := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			next := alloc + (p.Memsz - p.Filesz)
			wrapped = wrapped || p.Memsz >= p.Filesz && next < alloc
			alloc = next
		}
	}
	if wrapped || alloc > MaxDeviceMemory {
		add("alloc", "loadCode allocates the file size plus every zero-filled tail, %s bytes, more than the %d bytes of device memory", allocText(alloc, wrapped), uint64(MaxDeviceMemory))
	}
	for _, i := range loads[1:] {
		if p := f.Progs[i]; p.Paddr-p.Off != base {
			add("paddr_offset", "segment %d has paddr - offset 0x%x, the first loaded segment (%d) has 0x%x", i, p.Paddr-p.Off, loads[0], base)
		}
	}
	entry := f.Entry - base // offset of the entry in the device buffer
	in, exec := -1, false
	for _, i := range loads {
		p := f.Progs[i]
		if p.Memsz >= p.Filesz {
			info.ZeroFill += p.Memsz - p.Filesz
		}
		if end, ok := tableEnd(p.Off, 1, p.Memsz); !ok || end > alloc {
			add("buffer", "segment %d ends at byte %s of the code buffer, loadCode allocates %d", i, endText(end, ok), alloc)
		}
		if entry >= p.Off && entry-p.Off < p.Memsz && (in < 0 || !exec) {
			in, exec = i, p.Flags&elf.PF_X != 0
			if exec && entry-p.Off >= p.Filesz {
				add("entry", "entry 0x%x is in the zero-filled tail of segment %d (file bytes end at 0x%x)", f.Entry, i, p.Paddr+p.Filesz)
			}
		}
	}
	switch {
	case in < 0:
		var rs []string
		for _, i := range loads {
			p := f.Progs[i]
			rs = append(rs, fmt.Sprintf("segment %d [0x%x, 0x%x)", i, base+p.Off, base+p.Off+p.Memsz))
		}
		add("entry", "entry 0x%x is outside every loaded segment (%s)", f.Entry, strings.Join(rs, ", "))
	case !exec:
		add("entry", "entry 0x%x is in segment %d, which is not executable (flags %s)", f.Entry, in, f.Progs[in].Flags)
	}
	return ps
}

// inRegions reports whether segment p fits in one of rs by physical or by
// virtual address (linker scripts put .data's load address in ROM).
func inRegions(rs []Region, p *elf.Prog) bool {
	for _, r := range rs {
		if r.fits(p.Paddr, p.Memsz) || r.fits(p.Vaddr, p.Memsz) {
			return true
		}
	}
	return false
}

// tableEnd is off + size*n, and false on overflow.
func tableEnd(off, size, n uint64) (uint64, bool) {
	if size != 0 && n > (^uint64(0))/size {
		return 0, false
	}
	l := size * n
	if off > ^uint64(0)-l {
		return 0, false
	}
	return off + l, true
}

func endText(end uint64, ok bool) string {
	if !ok {
		return "beyond 2^64"
	}
	return strconv.FormatUint(end, 10)
}

func machineName(m elf.Machine) string {
	s := m.String()
	if strings.HasPrefix(s, "EM_") {
		return s
	}
	return "unknown"
}

// describeNonELF says what a file that is not an ELF looks like, from its
// first bytes.
func describeNonELF(head []byte) string {
	lower := strings.ToLower(strings.TrimSpace(string(head)))
	start := head
	if len(start) > 24 {
		start = start[:24]
	}
	quoted := strconv.Quote(string(start))
	var what string
	switch {
	case strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") || strings.Contains(lower, "<html"):
		what = "an HTML page (a failed download or an error page?)"
	case strings.HasPrefix(lower, "version https://git-lfs"):
		what = "a Git LFS pointer, not the file itself (git lfs pull?)"
	case bytes.HasPrefix(head, []byte("#!")):
		what = "a script"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		what = "gzip data"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		what = "a zip archive"
	case bytes.HasPrefix(head, []byte("!<arch>\n")):
		what = "an ar archive (a static library?)"
	case isText(head):
		what = "a text file"
	default:
		what = "unrecognised binary data"
	}
	return fmt.Sprintf("%s, starts with %s", what, quoted)
}

func isText(b []byte) bool {
	// Drop a rune cut at the end of the sample: the bytes from the last
	// rune start, when they are too few for the rune they begin.
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}

// problem builds a Problem with the effect the code has for kind.
func problem(kind ELFKind, code, msg string) *Problem {
	return &Problem{Code: code, Msg: msg, Effect: effect(kind, code)}
}

// effect says what the emulator or the runtime would do with a file that
// has this problem (reference et-driver-and-sysemu.md §3.8, §4.2).
func effect(kind ELFKind, code string) string {
	if kind == KindKernel {
		switch code {
		case "missing", "empty":
			return "ggml-et falls back to its embedded copy"
		case "not_regular", "unreadable", "not_elf", "truncated", "version", "malformed", "no_load":
			return "ggml-et loads this file instead of its embedded kernel and the runtime's loadCode cannot use it"
		case "class", "endian", "machine", "float_abi", "type":
			return "built with the wrong toolchain (want -march=rv64imf -mabi=lp64f, static): the kernel traps or computes garbage"
		case "entry":
			return "the runtime starts the harts there, outside the kernel's code: they trap or run garbage"
		case "paddr_offset":
			return "the runtime copies each segment to buffer + p_offset and derives the entry from the first one: code and data land at the wrong distance"
		case "buffer":
			return "loadCode writes past the device buffer it allocated for the code, over other allocations"
		case "memsz":
			return "the runtime's loadCode fails CHECK(memSize >= fileSize) and the process aborts"
		case "alloc":
			return "the runtime's loadCode cannot allocate it: the worker dies (std::bad_alloc) after the emulator boots"
		}
		return ""
	}
	switch code {
	case "missing", "empty":
		return "ggml-et aborts at startup; the emulator library alone would log FATAL in sysemu.log and hang forever"
	case "not_regular", "unreadable":
		return "sys_emu logs FATAL \"Error loading ELF\" in sysemu.log, keeps running without this firmware, and the runtime waits forever for PCIe ready"
	case "not_elf", "truncated", "version", "malformed":
		return "sys_emu silently loads it as nothing (no error anywhere) and the runtime waits forever for PCIe ready"
	case "no_load":
		return "nothing is loaded, so the runtime waits forever for PCIe ready"
	case "class", "endian", "machine", "float_abi", "type", "entry", "load_range", "memsz":
		return "it loads, then the firmware crashes, traps or never signals ready: a hang or a 300 s discovery timeout"
	}
	return ""
}

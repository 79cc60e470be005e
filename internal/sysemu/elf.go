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
// ggml's BASE_ADDRESS (reference et-driver-and-sysemu.md §4.2).
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

// KernelSpec is the spec of an ET compute-kernel ELF: linked at
// KernelBase, consistent paddr − offset across PT_LOAD segments, no
// allocated .bss, memsz ≥ filesz.
var KernelSpec = ELFSpec{
	Kind:  KindKernel,
	Entry: Region{Name: "KERNEL_UMODE_ENTRY", Lo: KernelBase, Hi: KernelBase + 1},
}

// Problem is one reason an ELF (or any install file) is wrong.
type Problem struct {
	// Code is a stable short name: missing, not_regular, unreadable,
	// empty, not_elf, truncated, class, endian, version, malformed,
	// machine, type, float_abi, no_load, memsz, entry, load_range,
	// paddr_offset, bss.
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
	// Loads is the number of PT_LOAD segments with memsz > 0.
	Loads int
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
	return s + fmt.Sprintf(", entry 0x%x, %d PT_LOAD, %d bytes", i.Entry, i.Loads, i.SizeBytes)
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

	// Segments. The runtime treats any type with bit 0 set as loadable
	// and skips empty ones (reference §4.2); count real PT_LOADs only.
	var loads []*elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 {
			loads = append(loads, p)
		}
	}
	info.Loads = len(loads)
	for i, p := range f.Progs {
		if p.Type&elf.PT_LOAD == 0 {
			continue
		}
		if p.Memsz < p.Filesz {
			add("memsz", "segment %d: memsz %d < filesz %d", i, p.Memsz, p.Filesz)
		}
		if end, ok := tableEnd(p.Off, 1, p.Filesz); !ok || end > uint64(size) {
			add("truncated", "truncated: segment %d needs file bytes up to %s, the file has %d", i, endText(end, ok), size)
		}
	}
	if len(loads) == 0 {
		add("no_load", "no PT_LOAD segment with memsz > 0")
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
	if kind == KindKernel {
		var first *elf.Prog
		for i, p := range f.Progs {
			if p.Type&elf.PT_LOAD == 0 || p.Memsz == 0 {
				continue
			}
			if first == nil {
				first = p
				continue
			}
			if p.Paddr-p.Off != first.Paddr-first.Off {
				add("paddr_offset", "segment %d has paddr - offset 0x%x, the first PT_LOAD has 0x%x", i, p.Paddr-p.Off, first.Paddr-first.Off)
			}
		}
		for _, s := range f.Sections {
			if s.Type == elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 && isBSS(s.Name) {
				add("bss", "allocated %s section (%d bytes)", s.Name, s.Size)
			}
		}
	}
	return info, ps
}

func isBSS(name string) bool {
	for _, b := range []string{".bss", ".sbss"} {
		if name == b || strings.HasPrefix(name, b+".") {
			return true
		}
	}
	return false
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
	if !utf8.Valid(b) && utf8.Valid(b[:max(0, len(b)-utf8.UTFMax)]) {
		b = b[:len(b)-utf8.UTFMax] // a rune cut at the end of the sample
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
			return "not linked at BASE_ADDRESS: the harts start at the wrong instruction"
		case "paddr_offset":
			return "the runtime copies each segment to buffer + p_offset and derives the entry from the first one: code and data land at the wrong distance"
		case "bss":
			return "the runtime copies file bytes only, so .bss is never zeroed (kernels are built with -fno-zero-initialized-in-bss)"
		case "memsz":
			return "a malformed segment: the runtime copies more bytes than the segment holds"
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

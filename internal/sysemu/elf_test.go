package sysemu

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/sysemu/sysemutest"
)

func TestFirmwareTable(t *testing.T) {
	fws := Firmware()
	if len(fws) != len(FirmwareFiles) || len(fws) != len(sysemutest.Firmware) {
		t.Fatalf("%d firmware specs, %d FirmwareFiles, %d test firmware", len(fws), len(FirmwareFiles), len(sysemutest.Firmware))
	}
	for i, fw := range fws {
		if fw.Path != FirmwareFiles[i] || fw.Path != sysemutest.Firmware[i].Path {
			t.Errorf("firmware %d: path %q, FirmwareFiles %q, test %q", i, fw.Path, FirmwareFiles[i], sysemutest.Firmware[i].Path)
		}
		// Each valid test ELF passes its own spec and fails every other
		// one: the specs tell the five files apart.
		data := sysemutest.Firmware[i].ELF.Bytes()
		for j, other := range fws {
			_, ps := CheckELFData(bytes.NewReader(data), int64(len(data)), other.Spec)
			if (i == j) != (len(ps) == 0) {
				t.Errorf("%s checked as %s: problems %v", fw.ID, other.ID, ps)
			}
		}
	}
}

func codes(ps []Problem) []string {
	var cs []string
	for _, p := range ps {
		cs = append(cs, p.Code)
	}
	return cs
}

func TestCheckELFData(t *testing.T) {
	fw := Firmware()
	bootrom, mm, wm := fw[0].Spec, fw[3].Spec, fw[4].Spec
	valid := sysemutest.Firmware[0].ELF
	with := func(f func(*sysemutest.ELF)) []byte {
		e := valid
		e.Segments = slices.Clone(e.Segments)
		e.Sections = slices.Clone(e.Sections)
		f(&e)
		return e.Bytes()
	}
	kernel := func(f func(*sysemutest.ELF)) []byte {
		e := sysemutest.Kernel()
		f(&e)
		return e.Bytes()
	}
	noSections := with(func(e *sysemutest.ELF) { e.Sections = nil })
	tests := []struct {
		name  string
		data  []byte
		spec  ELFSpec
		codes []string
		msg   string // substring of the first problem
	}{
		{"valid bootrom", valid.Bytes(), bootrom, nil, ""},
		{"valid kernel", sysemutest.Kernel().Bytes(), KernelSpec, nil, ""},
		{"lp64d", with(func(e *sysemutest.ELF) { e.Flags = 0x5 }), bootrom, []string{"float_abi"}, "lp64d float ABI (e_flags 0x5)"},
		{"soft float", with(func(e *sysemutest.ELF) { e.Flags = 0x1 }), bootrom, []string{"float_abi"}, "lp64 float ABI"},
		{"x86-64", with(func(e *sysemutest.ELF) { e.Machine = sysemutest.EMX8664; e.Flags = 0 }), bootrom, []string{"machine"}, "machine EM_X86_64 (e_machine 62), want EM_RISCV"},
		{"pie", with(func(e *sysemutest.ELF) { e.Type = sysemutest.ETDyn }), bootrom, []string{"type"}, "type ET_DYN, want ET_EXEC"},
		{"wrong entry", with(func(e *sysemutest.ELF) { e.Entry = 0x40000100 }), bootrom, []string{"entry"}, "entry 0x40000100, want 0x40000000 (SP reset PC)"},
		{"outside rom", with(func(e *sysemutest.ELF) { e.Segments[1].Vaddr, e.Segments[1].Paddr = 0x40400000, 0x40400000 }), bootrom, []string{"load_range"}, "segment 1 at 0x40400000-0x40400080 (paddr 0x40400000) outside SP ROM [0x40000000, 0x40010000)"},
		{"data lma in rom", with(func(e *sysemutest.ELF) { e.Segments[1].Vaddr = 0x40400000 }), bootrom, nil, ""},
		{"no load", with(func(e *sysemutest.ELF) {
			e.Segments = []sysemutest.Segment{{Type: sysemutest.PTNote, Filesz: 4, Memsz: 4}}
		}), bootrom, []string{"no_load"}, "no PT_LOAD segment with memsz > 0"},
		{"memsz < filesz", with(func(e *sysemutest.ELF) { e.Segments[1].Memsz = 0x10 }), bootrom, []string{"memsz"}, "segment 1: memsz 16 < filesz 64"},
		{"32-bit", with(func(e *sysemutest.ELF) { e.Class = 1 }), bootrom, []string{"class"}, "32-bit ELF (ELFCLASS32)"},
		{"big-endian", with(func(e *sysemutest.ELF) { e.Data = 2 }), bootrom, []string{"endian"}, "big-endian"},
		{"bad version", func() []byte { b := valid.Bytes(); b[6] = 7; return b }(), bootrom, []string{"version"}, "ELF version 7"},
		{"zero length", nil, bootrom, []string{"empty"}, "empty file (0 bytes)"},
		{"html", []byte("<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n"), bootrom, []string{"not_elf"}, `not an ELF file: an HTML page (a failed download or an error page?), starts with "<!DOCTYPE html>\n<html><b"`},
		{"lfs pointer", []byte("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"), bootrom, []string{"not_elf"}, "Git LFS pointer"},
		{"text", []byte("hello"), bootrom, []string{"not_elf"}, "a text file"},
		{"binary", []byte{0, 1, 2, 3, 0xff}, bootrom, []string{"not_elf"}, "unrecognised binary data"},
		// Issue 12: 1-3 byte files that are not UTF-8 panicked in isText.
		{"one byte 0xff", []byte{0xff}, KernelSpec, []string{"not_elf"}, "unrecognised binary data"},
		{"two bytes", []byte{'a', 0xff}, bootrom, []string{"not_elf"}, "unrecognised binary data"},
		{"three bytes", []byte{0xfe, 0xff, 0x80}, KernelSpec, []string{"not_elf"}, "unrecognised binary data"},
		{"cut rune", []byte{0xe2, 0x82}, bootrom, []string{"not_elf"}, "a text file"},
		{"text then cut rune", []byte("ab\xf0\x9f\x98"), bootrom, []string{"not_elf"}, "a text file"},
		{"cut rune after binary", []byte{0x01, 0xe2}, bootrom, []string{"not_elf"}, "unrecognised binary data"},
		{"three bytes of magic", []byte("\x7fEL"), bootrom, []string{"not_elf"}, ""},
		{"magic only", []byte("\x7fELF"), bootrom, []string{"truncated"}, "truncated ELF header: 4 bytes"},
		{"truncated header", valid.Bytes()[:40], bootrom, []string{"truncated"}, "truncated ELF header: 40 bytes, an ELF64 header needs 64"},
		{"truncated phdrs", valid.Bytes()[:100], bootrom, []string{"truncated"}, "the program headers end at byte 176, the file has 100 bytes"},
		{"truncated sections", valid.Bytes()[:0x1100], bootrom, []string{"truncated"}, "the section headers end at byte"},
		{"truncated segment", noSections[:0x1100], bootrom, []string{"truncated", "truncated"}, "segment 0 needs file bytes up to 4608, the file has 4352"},
		{"master as worker", sysemutest.Firmware[3].ELF.Bytes(), wm, []string{"entry", "load_range"}, "entry 0x8000800000 outside WorkerMinion SCODE"},
		{"worker as master", sysemutest.Firmware[4].ELF.Bytes(), mm, []string{"entry", "load_range"}, ""},
		{"kernel with bss", kernel(func(e *sysemutest.ELF) {
			e.Sections = append(e.Sections, sysemutest.Section{Name: ".bss", Type: sysemutest.SHTNobits, Flags: sysemutest.SHFAlloc | sysemutest.SHFWrite, Addr: sysemutest.KernelBase + 0x1080, Size: 0x40})
			e.Segments[1].Memsz = 0xc0
		}), KernelSpec, nil, ""},
		{"kernel with empty bss", kernel(func(e *sysemutest.ELF) {
			e.Sections = append(e.Sections, sysemutest.Section{Name: ".bss", Type: sysemutest.SHTNobits, Flags: sysemutest.SHFAlloc | sysemutest.SHFWrite, Addr: sysemutest.KernelBase + 0x1080})
		}), KernelSpec, nil, ""},
		// Every ggml-et kernel built on the test stack: segment 0 is
		// .riscv.attributes (type 0x70000003, bit 0 set) with memsz 0.
		{"kernel with empty riscv.attributes segment", kernel(func(e *sysemutest.ELF) {
			e.Segments = append([]sysemutest.Segment{{Type: 0x70000003, Flags: 4, Off: 0x2100, Filesz: 63}}, e.Segments...)
		}), KernelSpec, nil, ""},
		{"kernel with empty PT_LOAD", kernel(func(e *sysemutest.ELF) {
			e.Segments = append(e.Segments, sysemutest.Segment{Flags: 4, Off: 0x2100, Paddr: 0x10, Filesz: 8})
		}), KernelSpec, nil, ""},
		{"kernel only empty segments", kernel(func(e *sysemutest.ELF) {
			for i := range e.Segments {
				e.Segments[i].Memsz = 0
			}
		}), KernelSpec, []string{"no_load"}, "no loadable segment with memsz > 0"},
		{"kernel memsz < filesz", kernel(func(e *sysemutest.ELF) { e.Segments[1].Memsz = 0x40 }), KernelSpec, []string{"memsz"}, "segment 1: memsz 64 < filesz 128"},
		{"kernel attributes memsz < filesz", kernel(func(e *sysemutest.ELF) {
			p := uint64(sysemutest.KernelBase - 0x1000 + 0x2100)
			e.Segments = append([]sysemutest.Segment{{Type: 0x70000003, Flags: 4, Off: 0x2100, Vaddr: p, Paddr: p, Filesz: 63, Memsz: 1}}, e.Segments...)
		}), KernelSpec, []string{"memsz"}, "segment 0: memsz 1 < filesz 63"},
		{"kernel inconsistent paddr-offset", kernel(func(e *sysemutest.ELF) { e.Segments[1].Paddr += 0x100 }), KernelSpec, []string{"paddr_offset"}, "segment 1 has paddr - offset 0x8005800100, the first loaded segment (0) has 0x8005800000"},
		// bss.elf upstream: linked 0x2000 above the base, it runs.
		{"kernel linked above the base", kernel(func(e *sysemutest.ELF) {
			e.Entry += 0x2000
			for i := range e.Segments {
				e.Segments[i].Vaddr += 0x2000
				e.Segments[i].Paddr += 0x2000
			}
		}), KernelSpec, nil, ""},
		{"kernel entry mid-code", kernel(func(e *sysemutest.ELF) { e.Entry += 0x100 }), KernelSpec, nil, ""},
		{"kernel entry before the code", kernel(func(e *sysemutest.ELF) { e.Entry = 0x8005800000 }), KernelSpec, []string{"entry"},
			"entry 0x8005800000 is outside every loaded segment (segment 0 [0x8005801000, 0x8005801300), segment 1 [0x8005802000, 0x8005802080))"},
		{"kernel entry between segments", kernel(func(e *sysemutest.ELF) { e.Entry = sysemutest.KernelBase + 0x300 }), KernelSpec, []string{"entry"}, "outside every loaded segment"},
		{"kernel entry in data", kernel(func(e *sysemutest.ELF) { e.Entry = sysemutest.KernelBase + 0x1000 }), KernelSpec, []string{"entry"}, "entry 0x8005802000 is in segment 1, which is not executable (flags PF_W+PF_R)"},
		{"kernel entry in zero-filled tail", kernel(func(e *sysemutest.ELF) {
			e.Segments[0].Memsz = 0x400
			e.Entry = sysemutest.KernelBase + 0x380
		}), KernelSpec, []string{"entry"}, "entry 0x8005801380 is in the zero-filled tail of segment 0"},
		{"kernel zero-fill outside the allocation", kernel(func(e *sysemutest.ELF) {
			// Bit 0 set but not PT_LOAD: copied with its zero-filled tail,
			// not counted in the allocation.
			e.Segments[1].Type = 0x70000001
			e.Segments[1].Memsz = 0x100000
		}), KernelSpec, []string{"buffer"}, "segment 1 ends at byte 1056768 of the code buffer, loadCode allocates"},
		// Issue 33: memsz 2^63 passed, then loadCode died with std::bad_alloc.
		{"kernel zero-fill past device memory", kernel(func(e *sysemutest.ELF) { e.Segments[1].Memsz = 1 << 63 }), KernelSpec, []string{"alloc"},
			"loadCode allocates the file size plus every zero-filled tail, 9223372036854784288 bytes, more than the 17085497344 bytes of device memory"},
		{"kernel zero-fill over 2^64", kernel(func(e *sysemutest.ELF) {
			e.Segments[0].Memsz = 1 << 63
			e.Segments[1].Memsz = 1 << 63
			e.Entry = sysemutest.KernelBase
		}), KernelSpec, []string{"alloc", "buffer", "buffer"}, "over 2^64 bytes, more than the 17085497344 bytes of device memory"},
		{"kernel x86-64", kernel(func(e *sysemutest.ELF) { e.Machine = sysemutest.EMX8664 }), KernelSpec, []string{"machine"}, "machine EM_X86_64"},
		{"kernel soft float", kernel(func(e *sysemutest.ELF) { e.Flags = 0x1 }), KernelSpec, []string{"float_abi"}, "lp64 float ABI"},
		{"kernel pie", kernel(func(e *sysemutest.ELF) { e.Type = sysemutest.ETDyn }), KernelSpec, []string{"type"}, "type ET_DYN"},
		{"kernel lp64d", kernel(func(e *sysemutest.ELF) { e.Flags = 0x4 }), KernelSpec, []string{"float_abi"}, "lp64d"},
		{"kernel rvc lp64f", kernel(func(e *sysemutest.ELF) { e.Flags = 0x3 }), KernelSpec, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := CheckELFData(bytes.NewReader(tt.data), int64(len(tt.data)), tt.spec)
			if got := codes(ps); !slices.Equal(got, tt.codes) {
				t.Fatalf("codes = %v, want %v (problems: %v)", got, tt.codes, ps)
			}
			if tt.msg != "" && !strings.Contains(ps[0].Msg, tt.msg) {
				t.Errorf("message %q does not contain %q", ps[0].Msg, tt.msg)
			}
			for _, p := range ps {
				if p.Effect == "" {
					t.Errorf("problem %s has no effect", p.Code)
				}
			}
		})
	}
}

func TestELFInfoSummary(t *testing.T) {
	data := sysemutest.Firmware[0].ELF.Bytes()
	info, ps := CheckELFData(bytes.NewReader(data), int64(len(data)), Firmware()[0].Spec)
	if len(ps) != 0 {
		t.Fatal(ps)
	}
	want := "RV64 EXEC lp64f (e_flags 0x3), entry 0x40000000, 2 PT_LOAD, " + strconv.Itoa(len(data)) + " bytes"
	if got := info.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

func TestCheckELFFile(t *testing.T) {
	dir := t.TempDir()
	spec := Firmware()[0].Spec
	good := filepath.Join(dir, "good.elf")
	sysemutest.WriteFile(t, good, sysemutest.Firmware[0].ELF.Bytes(), 0o644)
	empty := filepath.Join(dir, "empty.elf")
	sysemutest.WriteFile(t, empty, nil, 0o644)
	sub := filepath.Join(dir, "sub.elf")
	os.Mkdir(sub, 0o755)
	dangling := filepath.Join(dir, "dangling.elf")
	os.Symlink(filepath.Join(dir, "nowhere.elf"), dangling)
	link := filepath.Join(dir, "link.elf")
	os.Symlink(good, link)
	fifo := filepath.Join(dir, "fifo.elf")
	haveFIFO := mkfifo(fifo) == nil
	tests := []struct {
		name, path, code, msg string
	}{
		{"good", good, "", ""},
		{"symlink to good", link, "", ""},
		{"missing", filepath.Join(dir, "missing.elf"), "missing", "missing"},
		{"dangling symlink", dangling, "missing", "missing: dangling symlink to " + filepath.Join(dir, "nowhere.elf")},
		{"empty", empty, "empty", "empty file (0 bytes)"},
		{"directory", sub, "not_regular", "not a regular file (a directory)"},
		{"fifo", fifo, "not_regular", "not a regular file (a named pipe)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "fifo" && !haveFIFO {
				t.Skip("no named pipes here")
			}
			_, ps := CheckELF(tt.path, spec)
			if tt.code == "" {
				if len(ps) != 0 {
					t.Fatalf("problems: %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Code != tt.code || ps[0].Msg != tt.msg {
				t.Fatalf("problems = %v, want one %s %q", ps, tt.code, tt.msg)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root can read a mode-000 file")
		}
		p := filepath.Join(dir, "secret.elf")
		sysemutest.WriteFile(t, p, sysemutest.Firmware[0].ELF.Bytes(), 0)
		_, ps := CheckELF(p, spec)
		if len(ps) != 1 || ps[0].Code != "unreadable" || ps[0].Msg != "cannot read: permission denied" {
			t.Fatalf("problems = %v", ps)
		}
	})
}

// compactELF is e laid out small for a fuzz seed: segments right after
// the headers with at most 16 bytes of data each; with shift, their
// addresses move with their file offsets relative to the first segment's
// (a kernel's paddr - offset must agree; firmware's addresses must stay
// in their regions). The builder's
// 4 KiB-aligned layout makes 4-9 KB seeds, and the fuzzer's minimiser
// spent whole minutes on those).
func compactELF(e sysemutest.ELF, shift bool) []byte {
	segs := make([]sysemutest.Segment, len(e.Segments))
	end := uint64(64 + 56*len(segs))
	off, next := end, (end+0xfff)&^0xfff // new and builder's offsets
	var first int64
	for i, s := range e.Segments {
		orig := s.Off
		if orig == 0 {
			orig = next
		}
		end = max(end, orig+s.Filesz)
		next = (end + 0xfff) &^ 0xfff
		d := int64(orig) - int64(off)
		if i == 0 || !shift {
			first = d
		}
		s.Vaddr -= uint64(d - first)
		s.Paddr -= uint64(d - first)
		s.Off, s.Filesz = off, min(s.Filesz, 16)
		s.Memsz = max(s.Memsz, s.Filesz)
		off += s.Filesz
		segs[i] = s
	}
	e.Segments = segs
	return e.Bytes()
}

func FuzzCheckELFData(f *testing.F) {
	// The compact seeds stay valid, so mutations start from ELFs that pass.
	valid := func(b []byte, spec ELFSpec) []byte {
		if _, ps := CheckELFData(bytes.NewReader(b), int64(len(b)), spec); len(ps) > 0 {
			f.Fatalf("compact seed (%v): %v", spec.Kind, ps)
		}
		return b
	}
	for i, fw := range sysemutest.Firmware {
		f.Add(valid(compactELF(fw.ELF, false), Firmware()[i].Spec))
	}
	f.Add(valid(compactELF(sysemutest.Kernel(), true), KernelSpec))
	f.Add([]byte("<html>"))
	for _, b := range [][]byte{{0xff}, {0xc3}, {'a', 0xff}, {0xe2, 0x82}, {0xf0, 0x9f, 0x98}, {0x7f, 'E', 0xff}} {
		f.Add(b) // issue 12: short non-UTF-8 files
	}
	f.Add(compactELF(sysemutest.ELF{Machine: sysemutest.EMX8664, Type: sysemutest.ETExec, Entry: 0x401000,
		Segments: []sysemutest.Segment{{Flags: 5, Vaddr: 0x400000, Paddr: 0x400000, Filesz: 0x100, Memsz: 0x100}}}, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzELF {
			return // see maxFuzzELF
		}
		checkELFData(t, data)
	})
}

// maxFuzzELF bounds FuzzCheckELFData's inputs: the compact seeds (headers,
// six program headers and 16 bytes of each segment: under 500 bytes) fit
// with room to grow; longer inputs only feed the fuzzer's minimiser, whose
// cost grows with the square of an input's length. Whole ELFs are
// TestCheckELFDataBigInputs'.
const maxFuzzELF = 640

// TestCheckELFDataBigInputs runs FuzzCheckELFData's checks on whole
// (builder-laid-out) ELFs, too big for its bound.
func TestCheckELFDataBigInputs(t *testing.T) {
	elfs := [][]byte{sysemutest.Kernel().Bytes()}
	for _, fw := range sysemutest.Firmware {
		elfs = append(elfs, fw.ELF.Bytes())
	}
	for i, b := range elfs {
		if len(b) <= maxFuzzELF {
			t.Fatalf("ELF %d is %d bytes, not past maxFuzzELF", i, len(b))
		}
		checkELFData(t, b)
	}
}

// checkELFSpecs are the specs checkELFData checks against: a kernel's and
// a firmware's.
var checkELFSpecs = []ELFSpec{KernelSpec, Firmware()[0].Spec}

// checkELFData is FuzzCheckELFData's body: problems are one line with a
// code, for each of checkELFSpecs.
func checkELFData(t *testing.T, data []byte) {
	for _, spec := range checkELFSpecs {
		info, ps := CheckELFData(bytes.NewReader(data), int64(len(data)), spec)
		for _, p := range ps {
			if p.Code == "" || p.Msg == "" || strings.Contains(p.Msg, "\n") {
				t.Fatalf("bad problem %#v", p)
			}
		}
		_ = info.Summary()
	}
}

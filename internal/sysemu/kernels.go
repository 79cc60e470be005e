package sysemu

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// fatalKernelProblems are the kernel ELF problems that make the runtime's
// loadCode throw or abort the process, or that no RISC-V device can run.
// The other problems (an entry outside the code, inconsistent segment
// offsets, a segment beyond the code buffer, the wrong float ABI or ELF
// type) load and run wrongly: warnings. What loads and runs correctly (an
// empty segment, .bss, an entry away from the link base) is no problem at
// all (reference et-driver-and-sysemu.md §4.2).
var fatalKernelProblems = map[string]bool{
	"missing": true, "empty": true,
	"not_regular": true, "unreadable": true, "not_elf": true, "truncated": true, "malformed": true,
	"version": true, "class": true, "endian": true, "machine": true, "memsz": true, "no_load": true,
	"alloc": true,
}

// FatalForKernel reports whether a problem of a kernel ELF stops it from
// being loaded at all (as opposed to a warning: it loads, and may run
// wrongly).
func (p Problem) FatalForKernel() bool { return fatalKernelProblems[p.Code] }

// KernelError is a kernel ELF the runtime cannot load (bad input).
type KernelError struct{ Msg string }

func (e *KernelError) Error() string { return e.Msg }

// InputError marks KernelError as bad user input (exit 2).
func (e *KernelError) InputError() {}

// MissingKernelsError lists kernel ELFs that are not in the folder: the
// install or --kernels folder lacks them (unavailable, not bad input).
type MissingKernelsError struct {
	Dir   string
	Names []string // file names, <kernel>.elf
}

func (e *MissingKernelsError) Error() string {
	return fmt.Sprintf("%d kernel ELF(s) missing from %s, nothing booted: %s", len(e.Names), e.Dir, strings.Join(e.Names, ", "))
}

// ReadKernel reads one kernel ELF and checks it as the runtime's loadCode
// needs it: one it cannot load is a *KernelError (a missing file too);
// other problems are returned as warnings.
func ReadKernel(path string) ([]byte, []string, error) {
	_, probs := CheckELF(path, KernelSpec)
	var warns []string
	for _, p := range probs {
		if p.FatalForKernel() {
			return nil, nil, &KernelError{fmt.Sprintf("%s: %s", path, p.Msg)}
		}
		warns = append(warns, fmt.Sprintf("%s: %s", path, p.String()))
	}
	b, err := readKernelFile(path)
	if err != nil {
		return nil, nil, &KernelError{fmt.Sprintf("%s: %s", path, pathErrText(err))}
	}
	return b, warns, nil
}

// MaxKernelELF bounds a kernel ELF et reads (ggml-et's largest, the
// uberkernel, is about 110 KiB): a larger one is refused before it is read.
const MaxKernelELF = 64 << 20

// readKernelFile reads a kernel ELF (a regular file: CheckELF said so) of
// at most MaxKernelELF bytes.
func readKernelFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("larger than %d MiB, more than any kernel ELF (et reads no more)", MaxKernelELF>>20)
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxKernelELF {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKernelELF+1))
	if err == nil && len(b) > MaxKernelELF { // it grew
		err = tooLarge
	}
	return b, err
}

// LoadKernels reads dir/<name>.elf for every name, before anything boots.
// Missing kernels are listed together (*MissingKernelsError); unusable
// ones are one *KernelError; other problems are warnings ("kernel PATH:
// what").
func LoadKernels(dir string, names []string) (elfs map[string][]byte, warnings []string, err error) {
	elfs = map[string][]byte{}
	var missing, bad []string
	for _, name := range names {
		path := filepath.Join(dir, name+".elf")
		_, probs := CheckELF(path, KernelSpec)
		fatal := ""
		for _, p := range probs {
			switch {
			case p.Code == "missing" || p.Code == "empty":
				missing = append(missing, name+".elf")
				fatal = "-"
			case p.FatalForKernel():
				fatal = p.Msg
			default:
				warnings = append(warnings, fmt.Sprintf("kernel %s: %s", path, p.Msg))
			}
			if fatal != "" {
				break
			}
		}
		switch {
		case fatal == "-":
			continue
		case fatal != "":
			bad = append(bad, fmt.Sprintf("%s: %s", name+".elf", fatal))
			continue
		}
		b, err := readKernelFile(path)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name+".elf", pathErrText(err)))
			continue
		}
		elfs[name] = b
	}
	if len(missing) > 0 {
		return nil, warnings, &MissingKernelsError{Dir: dir, Names: missing}
	}
	if len(bad) > 0 {
		return nil, warnings, &KernelError{fmt.Sprintf("unusable kernel ELF(s) in %s, nothing booted: %s", dir, strings.Join(bad, "; "))}
	}
	return elfs, warnings, nil
}

func pathErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

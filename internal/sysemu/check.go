package sysemu

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Status is the outcome of one check.
type Status string

// The statuses, from best to worst.
const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Result is one check of an install.
type Result struct {
	// ID is a stable short name ("firmware.bl2", "sys_emu", "kernel.rope_f32").
	ID string
	// Path is the file or directory checked, or "".
	Path   string
	Status Status
	// Detail says what was found; for a failure, what is wrong and what
	// the emulator or runtime would do about it.
	Detail string
}

// Options say what to check.
type Options struct {
	// Prefix is the install, from ResolvePrefix.
	Prefix Prefix
	// RunDir is where the UART logs go; "" means Cwd.
	RunDir string
	// Cwd is the current directory (sysemu.log lands there), injected for
	// tests; "" means os.Getwd. Relative paths are resolved against it.
	Cwd string
	// KernelsDir is a folder of compute-kernel ELFs; "" skips the kernel
	// checks.
	KernelsDir string
	// KernelsSource says where KernelsDir came from, for the kernels row's
	// label ("--kernels", "GGML_ET_KERNELS_PATH"); "" shows none.
	KernelsSource string
	// ExpectedKernels are the kernel names ggml-et uses (the kernelmap
	// catalog). With KernelsDir set, the names the folder lacks are
	// listed; nil skips that list.
	ExpectedKernels []string
	// Probe runs `sys_emu -help`.
	Probe bool
	// ProbeTimeout bounds the probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
}

// Report is the outcome of Check.
type Report struct {
	Prefix  Prefix
	Results []Result
}

// OK reports whether no check failed (warnings allowed).
func (r Report) OK() bool { return len(r.Failed()) == 0 }

// Failed returns the failed results, in check order.
func (r Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status == StatusFail {
			out = append(out, res)
		}
	}
	return out
}

// Count returns how many results have status s.
func (r Report) Count(s Status) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == s {
			n++
		}
	}
	return n
}

// UART logs the emulator writes in the run directory, and its own log,
// written in the current directory (reference §3.6).
var (
	uartLogs   = []string{"pu_uart0_tx.log", "pu_uart1_tx.log", "spio_uart0_tx.log", "spio_uart1_tx.log"}
	sysemuLogs = []string{"sysemu.log"}
)

// Check answers "will the emulator boot from this install, and if not,
// why": the prefix, the five firmware ELFs, bin/sys_emu (and optionally
// its -help probe), the run and current directories, the developer files
// of the etrt backend, and optionally a folder of kernel ELFs. It returns
// one Result per check, in a fixed order. It blocks only in the probe,
// which honours ctx and Options.ProbeTimeout.
func Check(ctx context.Context, opts Options) Report {
	cwd := opts.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || cwd == "" {
			return p
		}
		return filepath.Join(cwd, p)
	}
	prefix := abs(opts.Prefix.Dir)
	runDir := abs(opts.RunDir)
	if runDir == "" {
		runDir = cwd
	}
	var rs []Result
	add := func(r Result) { rs = append(rs, r) }

	add(checkPrefix(opts.Prefix, prefix))
	for _, w := range opts.Prefix.Warnings {
		add(Result{ID: "prefix.et_platform", Status: StatusWarn, Detail: w})
	}
	for _, fw := range firmwareOrdered {
		add(checkFirmware(prefix, fw))
	}
	sysEmu := filepath.Join(prefix, SysEmuBinary)
	se := checkSysEmu(sysEmu)
	add(se)
	if opts.Probe {
		add(probeResult(ctx, sysEmu, se, opts.ProbeTimeout))
	}
	add(checkWritableDir("run_dir", runDir, uartLogs,
		"the UART logs (pu_uart0_tx.log, spio_uart0_tx.log, ...) land here",
		"sys_emu logs FATAL \"Error creating ..._tx.log\" in sysemu.log and the firmware console output is lost"))
	add(checkWritableDir("cwd", cwd, sysemuLogs,
		"sysemu.log lands here (always the current directory, not the run directory)",
		"sysemu.log, the only place FATAL emulator errors are written, is lost"))
	rs = append(rs, checkDevFiles(prefix)...)
	if opts.KernelsDir != "" {
		rs = append(rs, checkKernels(abs(opts.KernelsDir), opts.KernelsSource, opts.ExpectedKernels)...)
	}
	return Report{Prefix: opts.Prefix, Results: rs}
}

func checkPrefix(p Prefix, dir string) Result {
	r := Result{ID: "prefix", Path: dir}
	src := fmt.Sprintf("from %s", p.Source)
	if p.Source == SourceDefault {
		src = "the default: --prefix, ET_TOOLCHAIN and TOOLCHAIN_ROOT are unset"
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Detail = StatusFail, fmt.Sprintf("no such directory (%s): nothing below can be found", src)
	case err != nil:
		r.Status, r.Detail = StatusFail, fmt.Sprintf("cannot stat (%s): %s", src, errText(err))
	case !fi.IsDir():
		r.Status, r.Detail = StatusFail, fmt.Sprintf("not a directory (%s)", src)
	default:
		r.Status, r.Detail = StatusOK, "install prefix ("+src+")"
	}
	return r
}

func checkFirmware(prefix string, fw FirmwareFile) Result {
	path := filepath.Join(prefix, fw.Path)
	info, ps := CheckELF(path, fw.Spec)
	if len(ps) == 0 {
		return Result{ID: fw.ID, Path: path, Status: StatusOK, Detail: info.Summary()}
	}
	return Result{ID: fw.ID, Path: path, Status: StatusFail, Detail: problemsDetail(ps)}
}

// problemsDetail joins problems into one line: every message, then the
// effect of the first (the most basic) problem.
func problemsDetail(ps []Problem) string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Msg
	}
	s := strings.Join(msgs, "; ")
	if ps[0].Effect != "" {
		s += " -> " + ps[0].Effect
	}
	return s
}

// hostMachine is the ELF machine of the running host.
func hostMachine() (elf.Machine, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64, true
	case "arm64":
		return elf.EM_AARCH64, true
	case "riscv64":
		return elf.EM_RISCV, true
	case "ppc64le":
		return elf.EM_PPC64, true
	case "s390x":
		return elf.EM_S390, true
	case "loong64":
		return elf.EM_LOONGARCH, true
	}
	return 0, false
}

// checkSysEmu checks bin/sys_emu. ggml-et aborts when it is missing or
// empty; the emulator library never runs it, so anything else wrong with
// it is a warning (reference §3.5).
func checkSysEmu(path string) Result {
	r := Result{ID: "sys_emu", Path: path}
	const ggml = "ggml-et refuses to start without it (it only checks that the file exists; the emulator library never runs it)"
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Detail = StatusFail, "missing -> "+ggml
		return r
	case err != nil:
		r.Status, r.Detail = StatusFail, "cannot stat: "+errText(err)+" -> "+ggml
		return r
	case !fi.Mode().IsRegular():
		r.Status, r.Detail = StatusFail, "not a regular file ("+modeKind(fi.Mode())+") -> "+ggml
		return r
	case fi.Size() == 0:
		r.Status, r.Detail = StatusFail, "empty file (0 bytes) -> "+ggml
		return r
	}
	const unused = "ggml-et only needs it to exist, but the standalone emulator and --probe cannot run"
	if fi.Mode().Perm()&0o111 == 0 {
		r.Status, r.Detail = StatusWarn, fmt.Sprintf("not executable (mode %s) -> %s", fi.Mode().Perm(), unused)
		return r
	}
	desc, problem := hostExecutable(path)
	if problem != "" {
		r.Status, r.Detail = StatusWarn, problem+" -> "+unused
		return r
	}
	r.Status, r.Detail = StatusOK, fmt.Sprintf("executable, %s, %d bytes", desc, fi.Size())
	return r
}

// hostExecutable says whether path is a 64-bit little-endian ELF
// executable for this host: a description when it is, or a problem.
func hostExecutable(path string) (desc, problem string) {
	f, err := os.Open(path)
	if err != nil {
		return "", "cannot read: " + errText(err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return "", "not an ELF file: " + describeNonELF(head)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", "malformed ELF: " + strings.TrimPrefix(err.Error(), "elf: ")
	}
	want, known := hostMachine()
	if known && ef.Machine != want {
		return "", fmt.Sprintf("an ELF for %s, this host is %s (%s)", machineName(ef.Machine), runtime.GOARCH, want)
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return "", fmt.Sprintf("ELF type %s, not an executable", ef.Type)
	}
	return fmt.Sprintf("an ELF %s for this host", strings.TrimPrefix(ef.Type.String(), "ET_")), ""
}

// probeResult runs sys_emu -help when the sys_emu check left something to
// run.
func probeResult(ctx context.Context, path string, se Result, timeout time.Duration) Result {
	r := Result{ID: "sys_emu.probe", Path: path}
	if se.Status == StatusFail {
		r.Status, r.Detail = StatusWarn, "skipped: bin/sys_emu is unusable (see the sys_emu check)"
		return r
	}
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	pr := Probe(ctx, path, timeout)
	switch {
	case pr.Err != nil && ctx.Err() != nil:
		r.Status, r.Detail = StatusFail, "interrupted: "+pr.Err.Error()
	case pr.Err != nil:
		r.Status, r.Detail = StatusFail, "cannot run `sys_emu -help`: "+errText(pr.Err)
	case pr.TimedOut:
		r.Status, r.Detail = StatusFail, fmt.Sprintf("`sys_emu -help` did not exit within %s; its process group was killed", timeout)
	case pr.ExitCode == 1 && pr.Banner():
		r.Status, r.Detail = StatusOK, fmt.Sprintf("`sys_emu -help` exited with status 1 and printed %q: it runs and its shared libraries resolve", ProbeBanner)
	default:
		var why []string
		if pr.ExitCode != 1 {
			if pr.ExitCode < 0 {
				why = append(why, "killed by a signal, want exit status 1")
			} else {
				why = append(why, fmt.Sprintf("exit status %d, want 1", pr.ExitCode))
			}
		}
		if !pr.Banner() {
			why = append(why, fmt.Sprintf("no %q banner", ProbeBanner))
		}
		if line := firstLine(pr.Stderr); line != "" {
			why = append(why, "stderr: "+line)
		}
		r.Status, r.Detail = StatusFail, "`sys_emu -help`: "+strings.Join(why, "; ")
	}
	return r
}

// firstLine is the first non-blank line of s, cut to 160 bytes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 160 {
				l = l[:160] + "..."
			}
			return l
		}
	}
	return ""
}

// checkWritableDir checks that dir exists, is a directory, accepts a new
// file, and that the log files already in it can be rewritten.
func checkWritableDir(id, dir string, logs []string, what, effect string) Result {
	r := Result{ID: id, Path: dir}
	fail := func(msg string) Result {
		r.Status, r.Detail = StatusFail, msg+" -> "+effect
		return r
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("no such directory")
	case err != nil:
		return fail("cannot stat: " + errText(err))
	case !fi.IsDir():
		return fail("not a directory")
	}
	tmp, err := os.CreateTemp(dir, ".et-check-sysemu-*")
	if err != nil {
		return fail("not writable: " + errText(err))
	}
	tmp.Close()
	os.Remove(tmp.Name())
	for _, name := range logs {
		p := filepath.Join(dir, name)
		li, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if li.Mode().IsDir() {
			return fail(name + " is a directory")
		}
		// Opening for writing without O_TRUNC leaves the file unchanged.
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return fail(name + " exists and cannot be rewritten: " + errText(err))
		}
		f.Close()
	}
	r.Status, r.Detail = StatusOK, "writable; "+what
	return r
}

// devEffect is why the developer files matter, and why they only warn.
const devEffect = "needed only to build et with -tags etrt (as ggml-et's CMake does); the emulator boots without it"

// checkDevFiles checks the CMake packages and headers the etrt backend
// builds against (reference §4.1, §5.3). Problems are warnings.
func checkDevFiles(prefix string) []Result {
	var rs []Result
	for _, pkg := range []struct{ id, name string }{
		{"dev.runtime_cmake", "runtime"},
		{"dev.device_layer_cmake", "deviceLayer"},
	} {
		dir := filepath.Join(prefix, "lib", "cmake", pkg.name)
		candidates := []string{pkg.name + "Config.cmake", strings.ToLower(pkg.name) + "-config.cmake"}
		r := Result{ID: pkg.id, Path: filepath.Join(dir, candidates[0]), Status: StatusWarn}
		for _, c := range candidates {
			p := filepath.Join(dir, c)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				r.Path, r.Status, r.Detail = p, StatusOK, fmt.Sprintf("CMake package %s (find_package(%s))", pkg.name, pkg.name)
			}
		}
		if r.Status != StatusOK {
			r.Detail = fmt.Sprintf("CMake package %s not found (want %s) -> %s", pkg.name, strings.Join(candidates, " or "), devEffect)
		}
		rs = append(rs, r)
	}
	headers := []string{"runtime/IRuntime.h", "runtime/Types.h", "device-layer/IDeviceLayer.h", "sw-sysemu/SysEmuOptions.h"}
	inc := filepath.Join(prefix, "include")
	var missing []string
	for _, h := range headers {
		if fi, err := os.Stat(filepath.Join(inc, h)); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, h)
		}
	}
	r := Result{ID: "dev.runtime_headers", Path: inc, Status: StatusOK, Detail: "runtime, device-layer and sw-sysemu headers present"}
	if len(missing) > 0 {
		r.Status, r.Detail = StatusWarn, "missing "+strings.Join(missing, ", ")+" -> "+devEffect
	}
	return append(rs, r)
}

// checkKernels checks every *.elf in dir as a compute kernel, then lists
// the expected names the folder lacks.
func checkKernels(dir, source string, expected []string) []Result {
	head := Result{ID: "kernels", Path: dir}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	var entries []fs.DirEntry
	if err == nil {
		entries, err = os.ReadDir(dir)
	}
	if err != nil {
		head.Status, head.Detail = StatusFail, "cannot read the kernels folder: "+errText(err)+" -> ggml-et silently uses its embedded kernels instead"
		return []Result{head}
	}
	known := make(map[string]bool, len(expected))
	for _, n := range expected {
		known[n] = true
	}
	present := map[string]bool{}
	var rs []Result
	for _, e := range entries { // ReadDir sorts by name
		name, ok := strings.CutSuffix(e.Name(), ".elf")
		if !ok || name == "" {
			continue
		}
		present[name] = true
		path := filepath.Join(dir, e.Name())
		info, ps := CheckELF(path, KernelSpec)
		r := Result{ID: "kernel." + name, Path: path}
		if len(ps) > 0 {
			r.Status, r.Detail = StatusFail, problemsDetail(ps)
		} else {
			r.Status, r.Detail = StatusOK, info.Summary()
		}
		if expected != nil && !known[name] {
			r.Detail += "; not a kernel name ggml-et uses (it never loads this file)"
		}
		rs = append(rs, r)
	}
	head.Status, head.Detail = StatusOK, fmt.Sprintf("%d kernel ELFs", len(rs))
	if source != "" {
		head.Detail += " (" + source + ")"
	}
	if len(rs) == 0 {
		head.Status, head.Detail = StatusWarn, "no *.elf files -> ggml-et uses its embedded kernels for everything"
	}
	rs = append([]Result{head}, rs...)
	if expected != nil {
		var missing []string
		for _, n := range expected {
			if !present[n] {
				missing = append(missing, n)
			}
		}
		sort.Strings(missing)
		m := Result{ID: "kernels.missing", Path: dir, Status: StatusOK,
			Detail: fmt.Sprintf("all %d kernels ggml-et uses are present", len(expected))}
		if len(missing) > 0 {
			m.Status = StatusWarn
			m.Detail = fmt.Sprintf("%d of %d kernels ggml-et uses are absent (ggml-et falls back to its embedded copies): %s",
				len(missing), len(expected), strings.Join(missing, " "))
		}
		rs = append(rs, m)
	}
	return rs
}

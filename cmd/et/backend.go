package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/runner"
)

// backendOptions are the flags that choose a device and open it: the
// reference device in process, or sysemu/pcie through the ET runtime in a
// worker process, all through registry.Open.
type backendOptions struct {
	Backend string
	Device  int
	// Devices is a --device list (et run-op: one job per device) and
	// AllDevices --device all; Device is then the first.
	Devices    []int
	AllDevices bool
	// listDevices lists the usable devices for --device all (nil: as et
	// devices does, registry.Usable; tests replace it).
	listDevices func(context.Context) ([]int, error)
	// Prefix is --prefix (the ET install sysemu boots from); "" means
	// $ET_TOOLCHAIN, $TOOLCHAIN_ROOT, /opt/et.
	Prefix string
	// RunDir is --run-dir; "" means a new temporary directory, removed
	// after a clean run and kept on failure.
	RunDir string
	// Kernels is --kernels (kernel ELF folder); "" means
	// $GGML_ET_KERNELS_PATH.
	Kernels    string
	SysemuOpts []string
	Timeout    time.Duration
	// MaxHostMemory is --max-host-memory: the host memory a case, or
	// run-kernel's buffers and params, may need (0: MemAvailable).
	MaxHostMemory uint64

	// Worker adjusts the worker's options before it starts (tests
	// re-execute the test binary as the worker).
	Worker func(*registry.WorkerOptions)
}

// addBackendFlags adds --backend, --device, --prefix, --run-dir,
// --sysemu-opt, --timeout and --max-host-memory (and --kernels when
// kernels is set).
func addBackendFlags(cmd *cobra.Command, b *backendOptions, kernels bool) {
	fl := cmd.Flags()
	fl.StringVar(&b.Backend, "backend", "ref", "device backend: {ref|sysemu|pcie}")
	fl.VarP(deviceFlag{b}, "device", "d", "device index within the backend (et run-op: also a list 0,1 or all, one worker per device)")
	fl.DurationVar(&b.Timeout, "timeout", 0, "give up when the device work (boot, loads, launches, syncs) takes longer in all (exit 4); host-side preparation does not count; 0 = no limit")
	fl.Var(sizeFlag{&b.MaxHostMemory}, "max-host-memory", "refuse (exit 2), before allocating, a case or buffers needing more host memory than this `size` (e.g. 8G); default: MemAvailable")
	cmd.RegisterFlagCompletionFunc("backend", cobra.FixedCompletions([]string{"ref", "sysemu", "pcie"}, cobra.ShellCompDirectiveNoFileComp))
	addNativeFlags(cmd, b, kernels)
}

// addNativeFlags adds the flags of the sysemu and pcie backends: --prefix,
// --run-dir, --sysemu-opt (and --kernels when kernels is set).
func addNativeFlags(cmd *cobra.Command, b *backendOptions, kernels bool) {
	fl := cmd.Flags()
	fl.StringVar(&b.Prefix, "prefix", "", "ET install sysemu boots from (default $ET_TOOLCHAIN, $TOOLCHAIN_ROOT, /opt/et)")
	fl.StringVar(&b.RunDir, "run-dir", "", "`dir` for the UART logs, sysemu.log and worker.log (default: a temporary directory, kept on failure)")
	fl.StringArrayVar(&b.SysemuOpts, "sysemu-opt", nil, "extra emulator `option` for sys_emu (repeatable, e.g. --sysemu-opt=-l)")
	if kernels {
		fl.StringVar(&b.Kernels, "kernels", "", "`dir` of kernel ELFs (<kernel>.elf) for sysemu and pcie (default $"+runner.KernelsPathEnv+")")
	}
}

// validate checks the flags (usage errors).
func (b *backendOptions) validate() error {
	switch b.Backend {
	case "ref", "sysemu", "pcie":
	default:
		return usageErrorf("invalid --backend %q (want ref, sysemu or pcie)", b.Backend)
	}
	if b.Device < 0 {
		return usageErrorf("--device must be >= 0")
	}
	if b.Timeout < 0 {
		return usageErrorf("--timeout must not be negative")
	}
	return nil
}

// spec is the registry's spec of the device the flags name, with m the
// ABI manifest of the reference device (nil: the built-in one).
func (b *backendOptions) spec(f *factory, m *abi.Manifest) registry.Spec {
	return registry.Spec{Backend: b.Backend, Index: b.Device, Manifest: m, Prefix: b.Prefix, RunDir: b.RunDir,
		SysemuOpts: b.SysemuOpts, Timeout: b.Timeout, Worker: b.Worker, Host: f.host()}
}

// host is what the registry needs from this process, and where it tells
// the user what happens: -v logs and warnings, the boot consoles of a
// booting emulator (on a terminal), the log tails of a timeout or a
// worker's death, and a run directory kept after a device failure.
func (f *factory) host() registry.Host {
	h := registry.Host{Executable: f.Executable, Getenv: f.Getenv, Getwd: f.Getwd, Now: f.Now, Logf: f.logf, Warnf: f.warnf,
		Tails: func(tails []registry.LogTail) {
			for _, t := range tails {
				fmt.Fprintf(f.IO.ErrOut, "et: %s (last %d lines):\n", t.Name, len(t.Lines))
				for _, l := range t.Lines {
					fmt.Fprintf(f.IO.ErrOut, "    %s\n", l)
				}
			}
		},
		Kept: func(backend, dir string) { fmt.Fprintf(f.IO.ErrOut, "et: %s logs kept in %s\n", backend, dir) },
	}
	if f.IO.ErrTTY {
		h.BootLine = func(console, line string) { fmt.Fprintf(f.IO.ErrOut, "et: boot: %s: %s\n", console, line) }
	}
	return h
}

// streamErrorRows are the table rows of stream errors: one per group of
// hart contexts that say the same thing (detail, registers, user error),
// with how many harts and which, at most maxGroups per error (the rest are
// counted in a note); one row for an error without contexts. A kernel
// error carries a context per hart (2080 on sysemu), so the table stays
// short; -o json has every context. Registers the device left unfilled
// for that kind of context show as "-".
func streamErrorRows(prefix []string, errs []driver.StreamError, maxGroups int) (rows [][]string, notes []string) {
	for _, e := range errs {
		if len(e.Contexts) == 0 {
			rows = append(rows, append(slices.Clone(prefix), e.Code, "-", "-", "-", "-", "-", devicesOr(e.Message, "-")))
			continue
		}
		type group struct {
			cells []string
			harts []uint32
		}
		var groups []*group
		index := map[string]*group{}
		for _, c := range e.Contexts {
			cells := []string{"-", "-", "-", devicesOr(c.Detail, "-")}
			if c.Filled("cause") {
				cells[0] = fmt.Sprintf("%d", c.Cause)
			}
			if c.Filled("epc") {
				cells[1] = fmt.Sprintf("0x%x", c.EPC)
			}
			if c.Filled("tval") {
				cells[2] = fmt.Sprintf("0x%x", c.TVal)
			}
			key := strings.Join(cells, "\x00") + fmt.Sprintf("\x00%d %t", c.UserError, c.HasUserError)
			g := index[key]
			if g == nil {
				g = &group{cells: cells}
				index[key] = g
				groups = append(groups, g)
			}
			g.harts = append(g.harts, c.Hart)
		}
		for i, g := range groups {
			if i == maxGroups {
				n := 0
				for _, g := range groups[i:] {
					n += len(g.harts)
				}
				notes = append(notes, fmt.Sprintf("%s: %d more group(s) of %d hart context(s) in -o json", e.Code, len(groups)-maxGroups, n))
				break
			}
			rows = append(rows, append(append(slices.Clone(prefix), e.Code, fmt.Sprint(len(g.harts)), hartList(g.harts)), g.cells...))
		}
		if e.Message != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", e.Code, e.Message))
		}
	}
	return rows, notes
}

// hartList names a set of harts compactly: "0-2047", "0-62 step 2",
// "3, 7, 9-12", or the first and last runs around "...".
func hartList(harts []uint32) string {
	hs := slices.Clone(harts)
	slices.Sort(hs)
	hs = slices.Compact(hs)
	if len(hs) > 2 {
		step := hs[1] - hs[0]
		regular := step > 1
		for i := 2; i < len(hs) && regular; i++ {
			regular = hs[i]-hs[i-1] == step
		}
		if regular {
			return fmt.Sprintf("%d-%d step %d", hs[0], hs[len(hs)-1], step)
		}
	}
	var runs []string
	for i := 0; i < len(hs); {
		j := i
		for j+1 < len(hs) && hs[j+1] == hs[j]+1 {
			j++
		}
		if j == i {
			runs = append(runs, fmt.Sprint(hs[i]))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", hs[i], hs[j]))
		}
		i = j + 1
	}
	if len(runs) > 6 {
		runs = append(append(runs[:3:3], "..."), runs[len(runs)-2:]...)
	}
	return strings.Join(runs, ", ")
}

// streamErrorHeaders go with streamErrorRows.
var streamErrorHeaders = []string{"code", "harts", "which", "cause", "epc", "tval", "detail"}

// maxFaultContexts bounds the groups of hart contexts shown per stream
// error in tables (a kernel error can carry one per hart, 2080); JSON has
// all.
const maxFaultContexts = 8

func runOpFaultTable(faults []runner.Fault) table {
	t := table{Title: "Kernel faults", Headers: append([]string{"case", "step"}, streamErrorHeaders...), Right: []int{3, 5}}
	for _, fl := range faults {
		rows, notes := streamErrorRows([]string{fl.Case, fl.Step}, fl.Errors, maxFaultContexts)
		t.Rows = append(t.Rows, rows...)
		t.Notes = append(t.Notes, notes...)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d case(s) stopped by a kernel fault: their outputs were not compared", len(faults)))
	return t
}

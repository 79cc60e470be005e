package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/kernelmap"
	"github.com/ainekko/et/internal/sysemu"
)

// checkSysemuOptions are the flags and seams of et check-sysemu.
type checkSysemuOptions struct {
	IO *ioStreams
	// Prefix is the resolved install prefix (flag > ET_TOOLCHAIN >
	// TOOLCHAIN_ROOT > /opt/et), with its source and warnings.
	Prefix sysemu.Prefix
	// RunDir is where the UART logs go; "" means Cwd.
	RunDir string
	// Cwd is the current directory (sysemu.log lands there).
	Cwd string
	// KernelsDir is the folder of kernel ELFs to check (--kernels, else
	// $GGML_ET_KERNELS_PATH); "" skips the kernel checks.
	KernelsDir string
	// KernelsSource is "--kernels" or "GGML_ET_KERNELS_PATH".
	KernelsSource string
	Probe         bool
	ProbeTimeout  time.Duration

	// Check runs the checks (replaced in tests).
	Check func(context.Context, sysemu.Options) sysemu.Report

	f *factory
}

func newCheckSysemuCmd(f *factory, runF func(context.Context, *checkSysemuOptions) error) *cobra.Command {
	opts := &checkSysemuOptions{IO: f.IO, Check: sysemu.Check, f: f}
	var prefixFlag, kernelsFlag string
	cmd := &cobra.Command{
		Use:   "check-sysemu [--prefix <dir>] [--run-dir <dir>] [--kernels <dir>] [--probe]",
		Short: "Check that the sys_emu emulator can boot from an ET install",
		Long: `Check an ET install before a job hangs on it: will the sys_emu emulator
boot from it, and if not, exactly why.

The install prefix is --prefix, else $ET_TOOLCHAIN, else $TOOLCHAIN_ROOT,
else /opt/et (the order ggml-et uses); a warning says when $ET_PLATFORM, the
prefix ggml-et is built against, names another one.

Checked: the five firmware ELFs the emulator preloads (exists, regular,
readable, non-empty, 64-bit little-endian RISC-V ET_EXEC with the
single-float ABI, loadable segments and entry point where that firmware
must be linked); bin/sys_emu; that the run directory (UART logs) and the
current directory (sysemu.log) are writable; the CMake packages and headers
the etrt backend builds against (warnings only); and with --kernels (default
$GGML_ET_KERNELS_PATH) every *.elf there as a compute kernel, plus the
kernel names ggml-et uses that the folder lacks. --probe also runs
'sys_emu -help' under a timeout.

A failed check says what the emulator would do with the file: a file that
is not an ELF, for instance, is silently loaded as nothing and the runtime
then waits forever. Exit status 0 when no check failed (warnings allowed),
1 when one did. Scripts should use -o json (schema et.check-sysemu/v1).`,
		Example: `  $ et check-sysemu
  $ et check-sysemu --prefix /opt/et --probe
  $ et check-sysemu --kernels build/et-kernels -o json
  $ et check-sysemu --prefix ~/et --run-dir /tmp/sysemu-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if fl.Changed("prefix") && strings.TrimSpace(prefixFlag) == "" {
				return usageErrorf("--prefix: empty directory name")
			}
			if fl.Changed("run-dir") && strings.TrimSpace(opts.RunDir) == "" {
				return usageErrorf("--run-dir: empty directory name")
			}
			if opts.ProbeTimeout <= 0 {
				return usageErrorf("--probe-timeout: must be positive, got %s", opts.ProbeTimeout)
			}
			opts.Prefix = sysemu.ResolvePrefix(prefixFlag, f.Getenv)
			if fl.Changed("kernels") {
				opts.KernelsDir, opts.KernelsSource = kernelsFlag, "--kernels"
			} else {
				opts.KernelsDir, opts.KernelsSource = f.Getenv("GGML_ET_KERNELS_PATH"), "GGML_ET_KERNELS_PATH"
			}
			cwd, err := f.Getwd()
			if err != nil {
				return fmt.Errorf("current directory: %w", err)
			}
			opts.Cwd = cwd
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return checkSysemuRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&prefixFlag, "prefix", "", "ET install prefix (default $ET_TOOLCHAIN, $TOOLCHAIN_ROOT, /opt/et)")
	fl.StringVar(&opts.RunDir, "run-dir", "", "directory the emulator writes its UART logs to (default the current directory)")
	fl.StringVar(&kernelsFlag, "kernels", "", "folder of compute-kernel ELFs to check (default $GGML_ET_KERNELS_PATH; \"\" to skip)")
	fl.BoolVar(&opts.Probe, "probe", false, "also run 'sys_emu -help' and expect exit status 1 and its banner")
	fl.DurationVar(&opts.ProbeTimeout, "probe-timeout", sysemu.DefaultProbeTimeout, "time limit of --probe")
	cmd.MarkFlagDirname("prefix")
	cmd.MarkFlagDirname("run-dir")
	cmd.MarkFlagDirname("kernels")
	return cmd
}

// checkSysemuDoc is the JSON and YAML form (schema et.check-sysemu/v1).
type checkSysemuDoc struct {
	Schema       string           `json:"schema"`
	Prefix       string           `json:"prefix"`
	PrefixSource string           `json:"prefix_source"`
	OK           bool             `json:"ok"`
	Checks       []checkSysemuRow `json:"checks"`
}

type checkSysemuRow struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

func checkSysemuRun(ctx context.Context, opts *checkSysemuOptions) error {
	f := opts.f
	f.logf("prefix %s (%s), run dir %q, kernels %q", opts.Prefix.Dir, opts.Prefix.Source, opts.RunDir, opts.KernelsDir)
	rep := opts.Check(ctx, sysemu.Options{
		Prefix:          opts.Prefix,
		RunDir:          opts.RunDir,
		Cwd:             opts.Cwd,
		KernelsDir:      opts.KernelsDir,
		KernelsSource:   opts.KernelsSource,
		ExpectedKernels: kernelmap.KernelNames(),
		Probe:           opts.Probe,
		ProbeTimeout:    opts.ProbeTimeout,
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.render(checkSysemuDocument(rep, opts, f.Global.Output, f.styles())); err != nil {
		return err
	}
	if !rep.OK() {
		return errSilent
	}
	return nil
}

// checkSysemuDocument builds the output. Tables show paths relative to the
// prefix or the current directory; JSON, YAML and CSV keep them whole.
func checkSysemuDocument(rep sysemu.Report, opts *checkSysemuOptions, format string, st styles) document {
	doc := checkSysemuDoc{
		Schema:       "et.check-sysemu/v1",
		Prefix:       rep.Prefix.Dir,
		PrefixSource: string(rep.Prefix.Source),
		OK:           rep.OK(),
		Checks:       make([]checkSysemuRow, 0, len(rep.Results)),
	}
	prefixAbs := rep.Prefix.Dir
	if !filepath.IsAbs(prefixAbs) {
		prefixAbs = filepath.Join(opts.Cwd, prefixAbs)
	}
	short := format == "table" || format == "markdown"
	t := table{Headers: []string{"id", "path", "status", "detail"}}
	for _, r := range rep.Results {
		doc.Checks = append(doc.Checks, checkSysemuRow{ID: r.ID, Path: r.Path, Status: string(r.Status), Detail: r.Detail})
		path := r.Path
		if short {
			path = checkSysemuPath(path, prefixAbs, opts.Cwd)
		}
		t.Rows = append(t.Rows, []string{r.ID, path, st.Status(string(r.Status)), r.Detail})
	}
	if short {
		fails, warns := rep.Count(sysemu.StatusFail), rep.Count(sysemu.StatusWarn)
		verdict := fmt.Sprintf("ok: no check failed (%s)", checkSysemuPlural(warns, "warning"))
		if fails > 0 {
			verdict = fmt.Sprintf("FAIL: %s failed, %s", checkSysemuPlural(fails, "check"), checkSysemuPlural(warns, "warning"))
		}
		t.Notes = []string{
			fmt.Sprintf("prefix %s (%s); paths are relative to it or to the current directory", prefixAbs, rep.Prefix.Source),
			verdict,
		}
	}
	return document{Data: doc, Tables: []table{t}}
}

// checkSysemuPath shortens p to a path relative to the prefix or the current
// directory when it lies below one of them.
func checkSysemuPath(p, prefix, cwd string) string {
	if p == "" {
		return p
	}
	for _, base := range []string{prefix, cwd} {
		if base == "" || (p == prefix && base == prefix) {
			continue
		}
		if rel, err := filepath.Rel(base, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}

func checkSysemuPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// checkSysemuCSV is the raw CSV form: one row per check, paths whole.
func checkSysemuCSV(d checkSysemuDoc) []csvTable {
	return []csvTable{{Rows: d.Checks}}
}

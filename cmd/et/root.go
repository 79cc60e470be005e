package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ainekko/et/internal/infile"
	"github.com/spf13/cobra"
)

// version is set at link time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// globalOptions are the persistent flags of the root command.
type globalOptions struct {
	Output  string
	NoColor bool
	Verbose bool
	// Wide keeps every table cell whole on a terminal (--wide).
	Wide bool
}

// factory holds what commands need from the outside world, as values or
// lazy functions, so that tests can build one by hand and et --help
// touches nothing.
type factory struct {
	IO     *ioStreams
	Global *globalOptions
	Getenv func(string) string
	Getwd  func() (string, error)
	Now    func() time.Time
	// Executable is the path of the running et binary (for worker re-exec).
	Executable func() (string, error)

	// started is set once cobra has parsed flags and arguments; an error
	// before that (unknown command, wrong number of arguments) is a usage
	// error.
	started bool
}

func newFactory(in io.Reader, out, errOut io.Writer) *factory {
	return &factory{
		IO:         newIOStreams(in, out, errOut, os.Getenv),
		Global:     &globalOptions{Output: "table"},
		Getenv:     os.Getenv,
		Getwd:      os.Getwd,
		Now:        time.Now,
		Executable: os.Executable,
	}
}

// styles returns the colour styles for the current flags.
func (f *factory) styles() styles {
	st := newStyles(f.IO)
	st.on = st.on && !f.Global.NoColor && f.Global.Output == "table"
	if !f.Global.Wide {
		st.width = f.IO.Width
	}
	return st
}

// render writes a command's document to stdout in the -o format.
func (f *factory) render(doc document) error {
	return render(f.IO.Out, f.Global.Output, f.styles(), doc)
}

// warnf prints a warning on stderr.
// A warning quoting input (a trace's strings, a kernel map's names) is
// clipped and its control characters are escaped (clipText).
func (f *factory) warnf(format string, args ...any) {
	fmt.Fprintf(f.IO.ErrOut, "et: warning: %s\n", clipText(fmt.Sprintf(format, args...)))
}

// logf prints a -v log line on stderr.
func (f *factory) logf(format string, args ...any) {
	if f.Global.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "et: "+format+"\n", args...)
	}
}

func newRootCmd(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "et",
		Short: "Toolkit for ET-SoC-1 kernel developers",
		Long: `et lists ET-SoC-1 devices, checks emulator installs, runs ggml ops through
the exact path ggml-et takes and compares them with reference math, and
turns ET runtime traces into reports.

Text output is for people and may change; scripts should use -o json or
-o csv, whose keys are stable and carry raw values in base units (CSV: one
table per kind of row, columns named as the JSON keys; docs/output-formats.md
lists them).

` + exitCodesHelp,
		Example: `  $ et devices
  $ et check-sysemu --prefix /opt/et
  $ et run-op -f testcases/
  $ et run-op -f testcases/norm.yaml --profile prof/ && et profile report prof/et_runtime_trace.json`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Subcommands must not define their own PersistentPreRunE: this
		// one marks the point after which errors are the command's own
		// rather than cobra's argument errors.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			f.started = true
			if err := useCPUKernels(f.Getenv); err != nil {
				return err
			}
			return validateOutput(f.Global.Output)
		},
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetVersionTemplate("et {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVarP(&f.Global.Output, "output", "o", "table", "output format: {table|json|yaml|csv|markdown|html}")
	pf.BoolVar(&f.Global.NoColor, "no-color", false, "never colour output (NO_COLOR is honoured too)")
	pf.BoolVarP(&f.Global.Verbose, "verbose", "v", false, "more detail in tables and logs on stderr")
	pf.BoolVar(&f.Global.Wide, "wide", false, "on a terminal, keep every table cell whole instead of fitting the table to its width")
	root.RegisterFlagCompletionFunc("output", outputCompletion)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &usageError{err}
	})

	root.AddCommand(
		newVersionCmd(f),
		newDevicesCmd(f, nil),
		newCheckSysemuCmd(f, nil),
		newRunOpCmd(f, nil),
		newRunKernelCmd(f, nil),
		newOpsCmd(f),
		newProfileCmd(f),
	)
	for _, c := range extraCommands {
		root.AddCommand(c(f))
	}
	addCompletionExamples(root)
	wrapHelp(root, f.IO.Width)
	return root
}

// extraCommands are added by files compiled only under some build tags
// (the etrt worker, for instance).
var extraCommands []func(*factory) *cobra.Command

// run is main without os.Exit: it parses args, runs the command and maps
// the result to an exit code.
func run(args []string, in io.Reader, out, errOut io.Writer) int {
	ctx, stop := notifyContext(context.Background(), func() {
		// A second signal ends et at once, stuck or not; its code comes
		// from exitCode, the one place that maps errors to exit codes.
		fmt.Fprintln(errOut, "et: interrupted")
		os.Exit(exitCode(context.Canceled))
	})
	defer stop()
	f := newFactory(in, out, errOut)
	return execute(ctx, f, args)
}

// notifyContext is signal.NotifyContext for SIGINT and SIGTERM, except
// that a second signal calls again (which exits): the first one cancels
// the context and lets the command clean up (stop the emulator, remove
// temp files); when that is stuck, the next one must still end et at once.
func notifyContext(parent context.Context, again func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			again()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// execute runs the root command built from f; tests call it directly.
func execute(ctx context.Context, f *factory, args []string) int {
	return executeRoot(ctx, f, newRootCmd(f), args)
}

// executeRoot runs a root command (tests swap subcommands in it).
func executeRoot(ctx context.Context, f *factory, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	cmd, err := root.ExecuteContextC(ctx)
	if werr := f.IO.outErr(); werr != nil && exitCode(err) != exitUsage {
		// Results that did not reach stdout are no verdict.
		err = ioErrorf("write stdout: %v", infile.ErrText(werr))
	}
	if err == nil {
		return exitOK
	}
	if !f.started && exitCode(err) == exitInternal {
		err = &usageError{err}
	}
	code := exitCode(err)
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) && code != exitTimeout {
		code = exitInterrupted
		if errors.Is(err, context.Canceled) && err.Error() == context.Canceled.Error() {
			err = errors.New("interrupted")
		}
	}
	var hints []string
	if msg := err.Error(); msg != "" {
		if code == exitInterrupted {
			msg = interruptedMsg(msg)
		}
		if isUsage(err) {
			msg, hints = usageLines(cmd, err)
		}
		fmt.Fprintf(f.IO.ErrOut, "et: %s\n", oneLine(msg))
	}
	for _, h := range hints {
		fmt.Fprintln(f.IO.ErrOut, h)
	}
	if isUsage(err) && cmd != nil {
		fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// interruptedMsg says "interrupted" in the message of an error an
// interrupt caused, instead of Go's "context canceled".
func interruptedMsg(msg string) string {
	msg = strings.ReplaceAll(msg, context.Canceled.Error(), "interrupted")
	if !strings.Contains(msg, "interrupted") {
		msg += " (interrupted)"
	}
	return msg
}

// oneLine keeps an error on one line: et prints each error once as
// "et: <what>: <why>". What it quotes from input is clipped and escaped
// (clipText): a 100 MB YAML scalar is not echoed, an ESC is not sent to
// the terminal.
func oneLine(s string) string { return clipText(s) }

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the et version",
		Args:    cobra.NoArgs,
		Example: "  $ et version\n  $ et version -o json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := newVersionDoc(readBuildInfo())
			if f.Global.Output == "table" {
				fmt.Fprint(f.IO.Out, versionText(d))
				return nil
			}
			return f.render(document{Data: d, Tables: []table{{
				Headers: []string{"version", "go", "commit", "modified", "ggml_commit", "ggml", "etrt"},
				Rows:    [][]string{{d.Version, d.Go, d.Commit, strconv.FormatBool(d.Modified), d.GGMLCommit, d.GGML, strconv.FormatBool(d.Etrt)}},
			}}})
		},
	}
}

// versionText is et version for people: the version line, then what a
// bug report needs.
func versionText(d versionDoc) string {
	commit := d.Commit
	switch {
	case commit == "":
		commit = "unknown (no VCS stamping: not a git checkout, or -buildvcs=false)"
	case d.Modified:
		commit += " (modified)"
	}
	etrt := "built in (sysemu and pcie backends)"
	if !d.Etrt {
		etrt = "not built in (sysemu and pcie need the etrt build tag, docs/etrt.md)"
	}
	return fmt.Sprintf("et %s (%s)\ncommit: %s\nggml:   %s, the built-in ABI manifest\n        (%s)\netrt:   %s\n",
		d.Version, d.Go, commit, d.GGML, d.GGMLCommit, etrt)
}

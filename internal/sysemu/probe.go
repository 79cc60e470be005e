package sysemu

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"
)

// DefaultProbeTimeout bounds `sys_emu -help` when Options.ProbeTimeout is 0.
const DefaultProbeTimeout = 10 * time.Second

// ProbeBanner is the first words of sys_emu's help text.
const ProbeBanner = "ET System Emulator"

// ProbeResult is what `sys_emu -help` did.
type ProbeResult struct {
	// ExitCode is the exit status, or -1 when the process did not exit
	// normally (killed, or never started).
	ExitCode int
	// Stdout and Stderr are the first 64 KiB of each stream.
	Stdout, Stderr string
	// TimedOut is true when the timeout fired and the process group was
	// killed.
	TimedOut bool
	// Err is a failure to start the process, or the context's error when
	// the caller's context ended first.
	Err error
}

// probeOutputLimit caps how much of each stream is kept.
const probeOutputLimit = 64 << 10

// Probe runs `path -help` with stdin from /dev/null, under timeout, in its
// own process group, and kills the whole group when the timeout or ctx
// fires and again after it exits, so that no child is left behind.
// sys_emu -help is expected to exit with status 1 and print ProbeBanner
// (reference et-driver-and-sysemu.md §3.2).
func Probe(ctx context.Context, path string, timeout time.Duration) ProbeResult {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, path, "-help")
	cmd.Stdin = nil // /dev/null: sys_emu reads UART input from stdin
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Kill anything the child left running in its group.
		killProcessGroup(cmd)
	}
	res := ProbeResult{ExitCode: -1, Stdout: stdout.String(), Stderr: stderr.String()}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		res.Err = ctx.Err()
	case tctx.Err() != nil:
		res.TimedOut = true
	case err != nil && !isExitError(err):
		res.Err = err
	}
	return res
}

func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// Banner reports whether the output holds ProbeBanner.
func (r ProbeResult) Banner() bool {
	return strings.Contains(r.Stdout, ProbeBanner) || strings.Contains(r.Stderr, ProbeBanner)
}

// limitedBuffer keeps the first probeOutputLimit bytes written to it and
// discards the rest, always reporting success so the child never blocks.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := probeOutputLimit - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }

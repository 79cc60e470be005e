package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/sysemu"
)

// Exit codes, DESIGN.md §5. They are mapped from errors in exactly one
// place, exitCode.
const (
	exitOK          = 0
	exitNegative    = 1
	exitUsage       = 2
	exitUnavailable = 3
	exitTimeout     = 4
	exitInternal    = 5
	exitInterrupted = 130
)

// exitCodesHelp is the table shown by et --help and docs/exit-codes.md.
const exitCodesHelp = `Exit codes:
  0    success (an empty device list is a success)
  1    negative verdict: out of tolerance, a check failed, a regression, a kernel fault
  2    usage or input error: bad flags, malformed YAML/trace/kernel map, unknown op
  3    unavailable: backend, device or install absent, busy, or not built in
  4    timeout: a watchdog fired (hung emulator or device)
  5    I/O or internal error: stdout or an output file could not be written
       (disk full, broken pipe, I/O error), a planner or reference-math failure
  130  interrupted (a second Ctrl-C or SIGTERM ends et at once)`

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errSilent is returned by a command that has already printed its negative
// verdict: exit 1, nothing more printed.
var errSilent = &exitError{code: exitNegative}

// usageError is a bad flag or argument; et prints the usage hint with it.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// negativef reports a negative verdict (exit 1) with a message.
func negativef(format string, args ...any) error {
	return &exitError{code: exitNegative, err: fmt.Errorf(format, args...)}
}

// inputErrorf reports bad input that is not a parse error of an internal
// package, such as a missing or unreadable input file: exit 2, without the
// usage hint.
func inputErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// ioErrorf reports an I/O or internal failure that is neither a verdict
// nor the user's input: exit 5.
func ioErrorf(format string, args ...any) error {
	return &exitError{code: exitInternal, err: fmt.Errorf(format, args...)}
}

// inputError is implemented by the error types of internal parsers and
// validators (YAML cases, traces, kernel maps, npy files): malformed input,
// exit 2. Internal packages implement it by duck typing, without importing
// cmd/et.
type inputError interface {
	error
	InputError()
}

// usageMisuse is implemented by the error types of internal packages for
// a run the flags cannot make (runner.UsageError): exit 2, with the usage
// hint, as a usageError.
type usageMisuse interface {
	error
	UsageError()
}

// isUsage reports a usage error: a bad flag or argument, or a run the
// flags cannot make. et prints the usage hint with it.
func isUsage(err error) bool {
	var ue *usageError
	var um usageMisuse
	return errors.As(err, &ue) || errors.As(err, &um)
}

// exitCode maps an error to its exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var ie inputError
	var mk *sysemu.MissingKernelsError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case isUsage(err), errors.As(err, &ie):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, driver.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return exitTimeout
	case errors.Is(err, driver.ErrUnavailable), errors.As(err, &mk):
		return exitUnavailable
	}
	// A worker that died (the emulator or runtime aborted) is no verdict
	// on the kernel, which the device reports as a stream error when it
	// faults: it falls through to exit 5 (docs/exit-codes.md).
	// Verdicts are explicit (errSilent, negativef): an error of no known
	// kind is an I/O or internal failure, never a negative verdict.
	return exitInternal
}

package graph

import "fmt"

// Error is malformed input: a YAML case, a .npy file, a case string or a
// flag. It prints as "file:line: msg" (or "file: msg" when there is no
// line) and implements InputError, so et exits with code 2.
type Error struct {
	File string // file name, case string or "--src"; may be empty
	Line int    // 1-based line; 0 when not known
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	}
	return e.Msg
}

// InputError marks Error as an input error (exit code 2).
func (e *Error) InputError() {}

func errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

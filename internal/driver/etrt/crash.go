package etrt

import (
	"regexp"
	"strings"
)

// dumpStart matches the first line of the Go runtime's crash dump: a fatal
// signal ("SIGABRT: abort", "SIGSEGV: segmentation violation"), a runtime
// fatal error, or an unrecovered panic.
var dumpStart = regexp.MustCompile(`^(SIG[A-Z0-9]+: |fatal error: |panic: )`)

// stackLine matches the lines of a native stack trace or a log's
// decoration, which never say why a process died: glog's "    @ 0x...",
// "*** Check failure stack trace: ***", gdb-style "#3 0x..." frames.
var stackLine = regexp.MustCompile(`^(\s+@ |\*\*\*|#\d+ +0x|\s+at )`)

// reasonLine matches lines that say why a native process is about to
// abort: a C++ exception's what(), FATAL or failed-check log lines, a
// failed assert, the shim's own messages.
var reasonLine = regexp.MustCompile(`what\(\):|terminate called|FATAL|Fatal|Check failed|Assertion|[Aa]bort|fake shim:|etshim:|[Ee]rror`)

// reasonWindow is how many of the last output lines crashReason looks at
// for an abort message: an older "error" line is not why the worker died.
const reasonWindow = 8

// crashReason splits a dead worker's output tail into its own output
// (before the Go runtime's crash dump) and that dump's first line, and
// picks the reason: the latest of its last reasonWindow lines (stack
// frames skipped) that reads like an abort message, else its last line
// that is not a stack frame. "terminate called
// after throwing ..." and the what() line after it are joined.
func crashReason(s string) (out, reason, signal string) {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	end := len(lines)
	for i, l := range lines {
		if dumpStart.MatchString(l) {
			end, signal = i, strings.TrimSpace(l)
			break
		}
	}
	lines = lines[:end]
	out = strings.TrimSpace(strings.Join(lines, "\n"))
	last, match, seen := -1, -1, 0
	for i := len(lines) - 1; i >= 0 && match < 0 && seen < reasonWindow; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || stackLine.MatchString(lines[i]) {
			continue
		}
		seen++
		if last < 0 {
			last = i
		}
		if reasonLine.MatchString(l) {
			match = i
		}
	}
	pick := match
	if pick < 0 {
		pick = last
	}
	if pick < 0 {
		return out, "", signal
	}
	reason = strings.TrimSpace(lines[pick])
	if what, ok := strings.CutPrefix(reason, "what():"); ok && pick > 0 {
		if prev := strings.TrimSpace(lines[pick-1]); strings.HasPrefix(prev, "terminate called") {
			reason = prev + ": " + strings.TrimSpace(what)
		}
	}
	return out, reason, signal
}

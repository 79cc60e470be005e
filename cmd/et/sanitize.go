package main

import (
	"fmt"
	"github.com/ainekko/et/internal/infile"
	"strings"
	"unicode/utf8"
)

// sanitizeText makes bytes read from outside (sysfs attributes, trace and
// kernel map strings) safe to print on a terminal: control characters
// (an ESC starts a terminal escape sequence), DEL, C1 controls and invalid
// UTF-8 are shown as \xNN or \u00NN escapes, everything else is kept.
func sanitizeText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// maxQuote is the most bytes of one word of input (a YAML scalar, a
// test-file line, a case string) that an error or a warning quotes, and
// maxLine the most bytes of the whole line.
const (
	maxQuote = 200
	maxLine  = 2048
)

// clipText makes a message that quotes input safe and short to print on
// one line: every run of bytes without a space longer than maxQuote keeps
// its first maxQuote bytes and says how many more there were, newlines
// become "; ", control characters are escaped (sanitizeText), and what
// follows the first maxLine bytes is left out, counted.
func clipText(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for len(s) > 0 {
		if b.Len() >= maxLine {
			fmt.Fprintf(&b, "... (%d more bytes)", len(s))
			break
		}
		i := strings.IndexAny(s, " \n")
		if i < 0 {
			i = len(s)
		}
		b.WriteString(sanitizeText(infile.Clip(s[:i], maxQuote)))
		if i < len(s) {
			if s[i] == '\n' {
				b.WriteString("; ")
			} else {
				b.WriteByte(' ')
			}
			i++
		}
		s = s[i:]
	}
	return b.String()
}

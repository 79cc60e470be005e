package main

import (
	"fmt"
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

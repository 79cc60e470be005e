package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"
)

// ioStreams are the process's streams and what is known about them.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY tell whether stdout and stderr are terminals.
	OutTTY bool
	ErrTTY bool
	// Width is the terminal's width in columns when stdout is one (0: not
	// a terminal, or unknown): tables and help text fit it.
	Width int
	// Color is true when stdout is a terminal, NO_COLOR is empty and TERM
	// is not dumb; --no-color and -o are applied on top by factory.styles.
	Color bool
	// rawOut is Out before the checkedWriter: the colour library
	// inspects it for a terminal.
	rawOut io.Writer
}

// newIOStreams inspects the real streams. getenv is the environment.
func newIOStreams(in io.Reader, out, errOut io.Writer, getenv func(string) string) *ioStreams {
	s := &ioStreams{In: in, Out: out, ErrOut: errOut}
	s.OutTTY = isTerminal(out) && getenv("TERM") != "dumb"
	s.ErrTTY = isTerminal(errOut) && getenv("TERM") != "dumb"
	s.Color = colorEnabled(s.OutTTY, getenv)
	if s.OutTTY {
		s.Width = terminalWidth(out)
	}
	s.rawOut, s.Out = out, &checkedWriter{w: out}
	s.ErrOut = &lockedWriter{w: errOut}
	return s
}

// lockedWriter serializes writes to stderr: progress and warnings come
// from the jobs of a run at once (one per device), and each line must
// arrive whole, whatever the writer underneath.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// checkedWriter remembers the first error writing stdout: table renderers
// and fmt.Fprint calls drop it, yet output lost to a full disk or a closed
// pipe must not end in exit 0 (executeRoot checks it).
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// outErr is the first error writing stdout, if any.
func (s *ioStreams) outErr() error {
	if c, ok := s.Out.(*checkedWriter); ok {
		return c.err
	}
	return nil
}

// colorEnabled: colour only on a terminal, and never when NO_COLOR is
// non-empty (https://no-color.org; checked here because the colour
// libraries parse it as a boolean).
func colorEnabled(outTTY bool, getenv func(string) string) bool {
	return outTTY && getenv("NO_COLOR") == ""
}

// terminalWidth is the width of the terminal w is (0 when unknown).
func terminalWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// styles colour status words and headings when colour is on.
type styles struct {
	on bool
	// width is the terminal width tables fit (0: keep every cell whole).
	width                int
	ok, warn, fail, bold lipgloss.Style
}

func newStyles(io *ioStreams) styles {
	w := io.Out
	if io.rawOut != nil {
		w = io.rawOut
	}
	r := lipgloss.NewRenderer(w)
	return styles{
		on:   io.Color,
		ok:   r.NewStyle().Foreground(lipgloss.Color("2")),
		warn: r.NewStyle().Foreground(lipgloss.Color("3")),
		fail: r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		bold: r.NewStyle().Bold(true),
	}
}

// Status colours a status word (ok/pass/warn/fail...) for a table cell.
func (s styles) Status(word string) string {
	if !s.on {
		return word
	}
	switch word {
	case "ok", "OK", "PASS", "pass", "ready", "installed", "same", "faster":
		return s.ok.Render(word)
	case "warn", "WARN", "FALLBACK", "XFAIL", "incomplete", "busy", "recovery", "new", "gone":
		return s.warn.Render(word)
	case "fail", "FAIL", "XPASS", "ERROR", "slower", "no-driver", "error":
		return s.fail.Render(word)
	}
	return word
}

// isStatus reports a cell that Status coloured: its escapes are the
// styles', not input's.
func (s styles) isStatus(cell string) bool {
	if !s.on || !strings.Contains(cell, "\x1b") {
		return false
	}
	word := sgr.ReplaceAllString(cell, "")
	return word != cell && s.Status(word) == cell
}

// sgr matches a colour or attribute escape (SGR).
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Heading makes a section title bold.
func (s styles) Heading(t string) string {
	if !s.on {
		return t
	}
	return s.bold.Render(t)
}

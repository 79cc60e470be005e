package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
)

// verdictHeaders name the columns a table never shortens to fit a
// terminal: the verdicts people read a table for.
var verdictHeaders = map[string]bool{"status": true, "verdict": true, "supported": true, "state": true, "result": true}

// maxVerdictWidth: a column named as a verdict whose cells are longer is
// a list (ops list's "supported" ops), and may be cut.
const maxVerdictWidth = 16

// minFitWidth is the narrowest a long column is cut to.
const minFitWidth = 8

// wrapHeaders name the prose columns (a check's detail, a fallback's
// reasons) whose cells wrap at spaces onto more lines instead of being
// elided: cut to a few words they would say nothing. Such a column takes
// at most a third of the terminal, at least minWrapWidth.
var wrapHeaders = map[string]bool{"detail": true, "why not": true, "constraints": true, "condition": true, "suggestion": true, "reasons": true, "error": true}

const minWrapWidth = 16

// fitTable makes t fit a terminal of width columns: first its Optional
// columns are hidden, in their order, while even the cut columns would not
// fit (a note names them); then the widest columns that are not verdicts
// are cut, widest first, down to their header (at
// least minFitWidth), their long cells elided in the middle ("head…tail",
// which keeps both a path's start and its file name), except prose
// columns (wrapHeaders), whose cells wrap onto rows of their own; notes
// are wrapped at spaces. It returns t unchanged when it fits or width is 0.
func fitTable(t table, width int) table {
	if width <= 0 || len(t.Headers) == 0 {
		return t
	}
	t = dropOptional(t, width)
	n := len(t.Headers)
	w := colWidths(t)
	wraps := make([]bool, n)
	for i, h := range t.Headers {
		if wrapHeaders[strings.ToLower(h)] && tableWidth(w) > width {
			wraps[i] = true
			w[i] = min(w[i], max(width/3, minWrapWidth, lipgloss.Width(h)))
		}
	}
	floor := fitFloors(t, w)
	for i := range floor {
		if wraps[i] {
			floor[i] = min(w[i], max(minWrapWidth, lipgloss.Width(t.Headers[i])))
		}
	}
	total := func() int { return tableWidth(w) }
	for total() > width {
		// The widest column that can shrink gives up what it can, down
		// to the next widest (so wide columns end up equally cut).
		// Prose columns (already at most a third) give up room last.
		i, second := -1, 0
		for _, prose := range []bool{false, true} {
			for j := range w {
				if w[j] <= floor[j] || wraps[j] != prose {
					continue
				}
				if i < 0 || w[j] > w[i] {
					i = j
				}
			}
			if i >= 0 {
				break
			}
		}
		if i < 0 {
			break // nothing left to cut: the table stays wider
		}
		for j := range w {
			if j != i && w[j] > floor[j] && wraps[j] == wraps[i] {
				second = max(second, w[j])
			}
		}
		target := max(floor[i], w[i]-(total()-width), min(second, w[i]-1))
		w[i] = target
	}
	out := t
	out.Rows = nil
	for _, r := range t.Rows {
		// A row whose prose cells wrap goes on in rows of their lines only.
		rows := [][]string{append([]string(nil), r...)}
		for i := 0; i < n && i < len(r); i++ {
			if !wraps[i] || strings.Contains(r[i], "\x1b") {
				rows[0][i] = elide(r[i], w[i])
				continue
			}
			for k, line := range wrapWords(r[i], w[i], "") {
				if k == len(rows) {
					rows = append(rows, make([]string, len(r)))
				}
				rows[k][i] = elide(line, w[i])
			}
		}
		out.Rows = append(out.Rows, rows...)
	}
	out.Notes = nil
	for _, note := range t.Notes {
		out.Notes = append(out.Notes, wrapText(note, width)...)
	}
	return out
}

// tableWidth is the width of a rendered table line with columns this wide.
func tableWidth(w []int) int {
	s := 2 * len(w) // a space either side of each cell
	for _, x := range w {
		s += x
	}
	return s
}

// colWidths are the widths of t's columns, headers included.
func colWidths(t table) []int {
	w := make([]int, len(t.Headers))
	for i, h := range t.Headers {
		w[i] = lipgloss.Width(h)
	}
	for _, r := range t.Rows {
		for i := 0; i < len(w) && i < len(r); i++ {
			w[i] = max(w[i], lipgloss.Width(r[i]))
		}
	}
	return w
}

// fitFloors are the widths t's columns (now w wide) may be cut to: their
// header's width, at least minFitWidth; verdict columns stay whole.
func fitFloors(t table, w []int) []int {
	floor := make([]int, len(w))
	for i, h := range t.Headers {
		floor[i] = min(w[i], max(lipgloss.Width(h), minFitWidth))
		if verdictHeaders[strings.ToLower(h)] && w[i] <= maxVerdictWidth {
			floor[i] = w[i]
		}
	}
	return floor
}

// dropOptional hides t's Optional columns, in order, while the table
// would not fit width even with every column cut to its floor.
func dropOptional(t table, width int) table {
	var hidden []string
	for _, col := range t.Optional {
		w := colWidths(t)
		if tableWidth(fitFloors(t, w)) <= width {
			break
		}
		i := slices.Index(t.Headers, col)
		if i < 0 {
			continue
		}
		hidden = append(hidden, col)
		t.Headers = slices.Delete(slices.Clone(t.Headers), i, i+1)
		rows := make([][]string, len(t.Rows))
		for k, r := range t.Rows {
			if i < len(r) {
				r = slices.Delete(slices.Clone(r), i, i+1)
			}
			rows[k] = r
		}
		t.Rows = rows
		var right []int
		for _, c := range t.Right {
			switch {
			case c < i:
				right = append(right, c)
			case c > i:
				right = append(right, c-1)
			}
		}
		t.Right = right
	}
	if len(hidden) > 0 {
		t.Notes = append(slices.Clone(t.Notes), fmt.Sprintf("columns %s hidden to fit the terminal (--wide or -o json shows them)", strings.Join(hidden, ", ")))
	}
	return t
}

// elide cuts s to width columns, keeping its head and tail around "…".
// A cell with colour codes or of double-width characters is left whole.
func elide(s string, width int) string {
	if len(s) <= width || strings.Contains(s, "\x1b") || utf8.RuneCountInString(s) <= width || lipgloss.Width(s) != utf8.RuneCountInString(s) {
		return s
	}
	r := []rune(s)
	keep := width - 1
	head := (keep + 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(keep-head):])
}

// wrapText wraps s at spaces into lines of at most width columns (a word
// longer than that gets a line of its own), continued two spaces in;
// width 0 keeps it whole.
func wrapText(s string, width int) []string { return wrapWords(s, width, "  ") }

// wrapWords wraps s at spaces into lines of at most width columns, the
// continuation lines starting with indent (width 0: s whole).
func wrapWords(s string, width int, indent string) []string {
	if width <= 0 || lipgloss.Width(s) <= width {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case lipgloss.Width(line)+1+lipgloss.Width(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = indent + word
		}
	}
	return append(lines, line)
}

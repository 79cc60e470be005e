package main

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
)

// runAtWidth runs et with stdout a terminal of width columns (0: a pipe).
func runAtWidth(t *testing.T, width int, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := testFactory(nil)
	f.IO.OutTTY, f.IO.Width = width > 0, width
	code := execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

// TestTablesFit80Columns renders every command's table on an 80-column
// terminal: no line is wider, the verdict columns are whole, and --wide
// (or a pipe) keeps every cell.
func TestTablesFit80Columns(t *testing.T) {
	tests := []struct {
		args []string
		// whole are cells that must appear unelided at 80 columns.
		whole []string
	}{
		{[]string{"run-op", "-f", "../../testcases/"}, []string{"PASS", "FALLBACK", "outputs passed"}},
		{[]string{"run-op", "--test-file", "../../testcases/test-files/llama_layer_small.txt"}, []string{"PASS", "in the test file"}},
		{[]string{"ops", "list"}, []string{"MUL_MAT"}},
		{[]string{"ops", "support", "--op", "ADD,MUL_MAT"}, []string{"yes", "no"}},
		{[]string{"ops", "explain", "-f", "../../testcases/llama_layer_small.yaml"}, []string{"supported"}},
		{[]string{"devices"}, []string{"ready"}},
		{[]string{"profile", "report", "testdata/profile/et_runtime_trace.json", "--view", "all"}, nil},
	}
	for _, tt := range tests {
		name := strings.Join(tt.args, " ")
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runAtWidth(t, 80, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			wide := 0
			for _, line := range strings.Split(out, "\n") {
				if w := lipgloss.Width(line); w > 80 {
					t.Errorf("line %d columns wide:\n%s", w, line)
				}
				wide = max(wide, lipgloss.Width(line))
			}
			for _, s := range tt.whole {
				if !strings.Contains(out, s) {
					t.Errorf("80 columns lost %q:\n%s", s, out)
				}
			}
			if wide > 80 || !strings.Contains(out, "…") && !strings.Contains(out, "hidden to fit") {
				return // already fitted: nothing to compare
			}
			_, full, _ := runAtWidth(t, 0, tt.args...)
			_, wideOut, _ := runAtWidth(t, 80, append(tt.args, "--wide")...)
			for what, o := range map[string]string{"a pipe": full, "--wide": wideOut} {
				if strings.Contains(o, "…") || strings.Contains(o, "hidden to fit") {
					t.Errorf("%s elides cells or hides columns:\n%s", what, o)
				}
			}
		})
	}
}

// TestHelpFits80Columns: on an 80-column terminal the flag lines of every
// command's help wrap (examples are commands and stay whole).
func TestHelpFits80Columns(t *testing.T) {
	f, _, _ := testFactory(nil)
	var paths [][]string
	root := newRootCmd(f)
	var visit func(args []string, cmds []*cobra.Command)
	visit = func(args []string, cmds []*cobra.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			a := append(append([]string(nil), args...), c.Name())
			paths = append(paths, a)
			visit(a, c.Commands())
		}
	}
	visit(nil, root.Commands())
	for _, p := range paths {
		code, out, _ := runAtWidth(t, 80, append(p, "--help")...)
		if code != 0 {
			t.Errorf("%v --help: exit %d", p, code)
			continue
		}
		inFlags := false
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasSuffix(line, "Flags:"):
				inFlags = true
			case line == "" || !strings.HasPrefix(line, " "):
				inFlags = false
			}
			if inFlags && lipgloss.Width(line) > 80 {
				t.Errorf("et %s --help: flag line %d columns wide:\n%s", strings.Join(p, " "), lipgloss.Width(line), line)
			}
		}
		if strings.Contains(out, "                                       ") {
			t.Errorf("et %s --help: a flag column padded past 40 columns", strings.Join(p, " "))
		}
	}
}

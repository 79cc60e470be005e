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
		{[]string{"run-op", "MUL_MAT(type_a=q8_0,type_b=f32,m=256,n=1,k=256)", "--perf", "--perf-runs", "2", "--perf-warmup", "0"}, []string{"wall median", "GFLOP/s", "% of peak"}},
		{[]string{"profile", "diff", "base=testdata/profile/et_runtime_trace.json", "new=testdata/profile/et_runtime_trace.json"}, []string{"base median", "new median", "same"}},
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

// TestHelpFits80Columns: on an 80-column terminal every line of every
// command's help fits: usage, text, commands, flags, and examples, which
// break with shell line continuations and still paste as the same
// commands.
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
		for _, line := range strings.Split(out, "\n") {
			if lipgloss.Width(line) > 80 {
				t.Errorf("et %s --help: line %d columns wide:\n%s", strings.Join(p, " "), lipgloss.Width(line), line)
			}
		}
		// Examples break with shell line continuations: joined, they are
		// the commands of the unwrapped help.
		_, whole, _ := runAtWidth(t, 0, append(p, "--help")...)
		examples := func(help string) string {
			_, ex, _ := strings.Cut(help, "Examples:\n")
			ex, _, _ = strings.Cut(ex, "\n\n")
			return strings.Join(strings.Fields(ex), " ")
		}
		if got, want := examples(strings.ReplaceAll(out, " \\\n", " ")), examples(whole); got != want {
			t.Errorf("et %s --help: wrapped examples join to\n%s\nwant\n%s", strings.Join(p, " "), got, want)
		}
		if strings.Contains(out, "                                       ") {
			t.Errorf("et %s --help: a flag column padded past 40 columns", strings.Join(p, " "))
		}
	}
}

// TestTitleWraps: a table's title longer than the terminal (run-op
// --perf's on sysemu) wraps at spaces; without a width it stays whole.
func TestTitleWraps(t *testing.T) {
	title := "Performance (wall: host time from launch to sync; cycles: the device's execution cycles from the runtime's profiler, median)"
	tb := table{Title: title, Headers: []string{"k", "v"}, Rows: [][]string{{"a", "1"}}}
	for _, width := range []int{80, 0} {
		var out strings.Builder
		if err := writeTables(&out, []table{tb}, false, styles{width: width}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		if width == 0 {
			if lines[0] != title {
				t.Errorf("width 0: title %q", lines[0])
			}
			continue
		}
		if lines[0]+" "+strings.TrimSpace(lines[1]) != title || lipgloss.Width(lines[0]) > 80 || lipgloss.Width(lines[1]) > 80 {
			t.Errorf("width 80: %q", out.String())
		}
	}
}

// TestFitWrapsProse: at 80 columns a prose column (check-sysemu's detail)
// wraps onto rows of its own, every word kept, instead of being elided to
// "missing -> …ng forever"; the other columns are cut first.
func TestFitWrapsProse(t *testing.T) {
	detail := "missing -> ggml-et aborts at startup; the emulator library alone would log FATAL in sysemu.log and hang forever"
	tb := table{Headers: []string{"id", "path", "status", "detail"}, Rows: [][]string{
		{"firmware.master_minion", "lib/esperanto-fw/MasterMinion/MasterMinion.elf", "fail", detail},
		{"run_dir", ".", "ok", "writable"},
	}}
	out := fitTable(tb, 80)
	if w := tableWidth(colWidths(out)); w > 80 {
		t.Errorf("%d columns wide: %q", w, out.Rows)
	}
	var words []string
	for k, r := range out.Rows[:len(out.Rows)-1] {
		if k > 0 && (r[0] != "" || r[1] != "" || r[2] != "") {
			t.Errorf("continuation row %d repeats cells: %q", k, r)
		}
		words = append(words, strings.Fields(r[3])...)
	}
	if got := strings.Join(words, " "); got != detail || len(out.Rows) < 3 {
		t.Errorf("detail %q over %d rows, want it whole over several", got, len(out.Rows)-1)
	}
	if last := out.Rows[len(out.Rows)-1]; last[0] != "run_dir" || last[3] != "writable" {
		t.Errorf("last row %q", last)
	}
	if lipgloss.Width(out.Rows[0][3]) < 80/3-2 {
		t.Errorf("detail cut to %d columns before the others", lipgloss.Width(out.Rows[0][3]))
	}
}

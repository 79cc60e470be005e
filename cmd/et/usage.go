package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// unknownCommandRE matches cobra's error for a word that is not a
// subcommand (its first line; suggestions follow on other lines).
var unknownCommandRE = regexp.MustCompile(`^unknown command "(.*)" for "(.*)"`)

// usageLines turns a usage error into what et prints: the error on one
// line, then lines of help. Cobra's "unknown command" error is two things:
// on a command with subcommands, a word that is none of them (the
// suggestion, if any, goes on its own line); on a command without, an
// argument it does not take.
func usageLines(cmd *cobra.Command, err error) (msg string, hints []string) {
	msg = err.Error()
	m := unknownCommandRE.FindStringSubmatch(msg)
	if m == nil || cmd == nil {
		return oneLine(msg), nil
	}
	word := m[1]
	if !cmd.HasAvailableSubCommands() {
		return fmt.Sprintf("unexpected argument %q: %s takes no arguments", word, cmd.CommandPath()), nil
	}
	msg = fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra sets it on the root only
	}
	switch s := cmd.SuggestionsFor(word); len(s) {
	case 0:
	case 1:
		hints = append(hints, fmt.Sprintf("Did you mean %q?", cmd.CommandPath()+" "+s[0]))
	default:
		for i := range s {
			s[i] = fmt.Sprintf("%q", cmd.CommandPath()+" "+s[i])
		}
		hints = append(hints, "Did you mean one of these? "+strings.Join(s, ", "))
	}
	return msg, hints
}

// completionExamples are the Example: blocks of cobra's completion
// commands (which it writes without any).
var completionExamples = map[string]string{
	"completion": `  $ et completion bash > ~/.local/share/bash-completion/completions/et
  $ et completion zsh > "${fpath[1]}/_et"
  $ et completion fish > ~/.config/fish/completions/et.fish`,
	"bash": `  $ et completion bash > ~/.local/share/bash-completion/completions/et
  $ et completion bash > /etc/bash_completion.d/et`,
	"zsh": `  $ et completion zsh > "${fpath[1]}/_et"
  $ et completion zsh > ~/.zsh/completions/_et`,
	"fish":       `  $ et completion fish > ~/.config/fish/completions/et.fish`,
	"powershell": `  $ et completion powershell > et.ps1`,
}

// addCompletionExamples adds cobra's completion command now (instead of
// when it runs) and gives it and its shells their examples.
func addCompletionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = completionExamples["completion"]
		for _, sub := range c.Commands() {
			sub.Example = completionExamples[sub.Name()]
		}
	}
}

// helpWidthKey is the root command's annotation holding the width help
// text wraps to (absent: no wrapping, as when stdout is not a terminal).
const helpWidthKey = "et.help-width"

func init() {
	cobra.AddTemplateFunc("etFlagUsages", func(fs *pflag.FlagSet, c *cobra.Command) string {
		return fs.FlagUsagesWrapped(helpWidth(c))
	})
	cobra.AddTemplateFunc("etWrapText", func(s string, c *cobra.Command) string {
		return wrapProse(s, helpWidth(c), "")
	})
	cobra.AddTemplateFunc("etExamples", func(c *cobra.Command) string {
		return wrapCommands(c.Example, helpWidth(c))
	})
	cobra.AddTemplateFunc("etUseLine", func(c *cobra.Command) string {
		return wrapProse(c.UseLine(), helpWidth(c)-2, "      ") // under "Usage:", indented 2
	})
}

// helpWidth is the width c's help wraps to (0: none).
func helpWidth(c *cobra.Command) int {
	w, _ := strconv.Atoi(c.Root().Annotations[helpWidthKey])
	return w
}

// wrapProse wraps each line of s longer than width at spaces, its
// continuation lines starting with indent; lines that start with white
// space (commands, code) stay whole, as does everything with width 0.
func wrapProse(s string, width int, indent string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			out = append(out, line)
			continue
		}
		out = append(out, wrapWords(line, width, indent)...)
	}
	return strings.Join(out, "\n")
}

// wrapHelp makes the flag lines of every command's help wrap to width
// columns (0: no wrapping): the flag descriptions continue under
// themselves, to the right of the flag column.
func wrapHelp(root *cobra.Command, width int) {
	if width > 0 {
		root.Annotations = map[string]string{helpWidthKey: strconv.Itoa(width)}
	}
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, "{{.LocalFlags.FlagUsages", "{{etFlagUsages .LocalFlags .Root")
	t = strings.ReplaceAll(t, "{{.InheritedFlags.FlagUsages", "{{etFlagUsages .InheritedFlags .Root")
	t = strings.ReplaceAll(t, "{{.UseLine}}", "{{etUseLine .}}")
	t = strings.ReplaceAll(t, "{{.Example}}", "{{etExamples .}}")
	root.SetUsageTemplate(t)
	// The text above the usage: prose lines wrap too.
	h := root.HelpTemplate()
	h = strings.Replace(h, "{{. | trimTrailingWhitespaces}}", "{{etWrapText . $ | trimTrailingWhitespaces}}", 1)
	root.SetHelpTemplate(h)
}

// wrapCommands breaks each example command line ("  $ et ...") wider than
// width at spaces outside quotes, with a shell line continuation (" \\"),
// so it fits and still pastes as one command; other lines stay whole.
func wrapCommands(s string, width int) string {
	if width <= 0 {
		return s
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if lipgloss.Width(line) <= width || !strings.HasPrefix(line[len(indent):], "$ ") {
			out = append(out, line)
			continue
		}
		// The places to break: spaces outside quotes, before a comment.
		var words []string
		var quote rune
		start := 0
		for i, r := range line {
			switch {
			case quote != 0:
				if r == quote {
					quote = 0
				}
			case r == '\'' || r == '"':
				quote = r
			case r == ' ' && i > len(indent)+1 && line[i-1] != ' ':
				words = append(words, line[start:i])
				start = i
			}
		}
		words = append(words, line[start:])
		// A flag and its value stay together.
		units := words[:1]
		for _, w := range words[1:] {
			last := strings.TrimLeft(units[len(units)-1], " ")
			if !strings.HasPrefix(strings.TrimLeft(w, " "), "-") && strings.HasPrefix(last, "-") && !strings.ContainsAny(last, "= ") {
				units[len(units)-1] += w
				continue
			}
			units = append(units, w)
		}
		words = units
		cur := ""
		for _, w := range words {
			if cur != "" && lipgloss.Width(cur)+lipgloss.Width(w)+2 > width && strings.TrimSpace(cur) != "$" {
				out = append(out, cur+" \\")
				cur = indent + "    " + strings.TrimLeft(w, " ")
				continue
			}
			cur += w
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

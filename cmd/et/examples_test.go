package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamplesParse checks every `$ et ...` line of every command's
// Example: the command path resolves and every flag parses, so help text
// cannot drift from the flags. (Commands whose examples run hermetically
// also execute them in their own tests.)
func TestExamplesParse(t *testing.T) {
	f, _, _ := testFactory(nil)
	root := newRootCmd(f)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "$ et ") {
				if line != "" && !strings.HasPrefix(line, "#") {
					t.Errorf("%s: example line %q does not start with \"$ et \"", c.CommandPath(), line)
				}
				continue
			}
			n++
			args := exampleArgs(line)
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("%s: example %q: no such command (%v)", c.CommandPath(), line, err)
				continue
			}
			cmd.InitDefaultHelpFlag()
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 10 {
		t.Errorf("only %d example lines found", n)
	}
}

// exampleArgs splits an example line into arguments: it drops "$ et",
// stops at a pipe, redirection or && and honours single quotes.
func exampleArgs(line string) []string {
	line = strings.TrimPrefix(line, "$ et ")
	var args []string
	var cur strings.Builder
	inQuote, has := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			inQuote = !inQuote
			has = true
		case !inQuote && (r == ' ' || r == '\t'):
			if has {
				args = append(args, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		args = append(args, cur.String())
	}
	for i, a := range args {
		if a == "|" || a == ">" || a == "&&" || a == "||" || a == "2>" || a == "\\" || strings.HasPrefix(a, "#") {
			return args[:i]
		}
	}
	return args
}

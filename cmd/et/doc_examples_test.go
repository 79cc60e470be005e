package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docExample is one "$ et ..." line of a fenced block of README.md or
// docs/*.md, with what the doc states about its result.
type docExample struct {
	file string
	line int
	text string
	// exit is the exit code the line's comment states ("# exit 3"; 0
	// when it states none), or of "|| ..." the code that runs the rest.
	exit int
	// sections and schemas are what the block after the line shows of the
	// output: CSV section names ("# run") and JSON schemas, in order.
	sections, schemas []string
}

var (
	docExitComment  = regexp.MustCompile(`^\s*exit (\d+)\s*($|[:;,(])`)
	docCSVSection   = regexp.MustCompile(`^# ([a-z_]+)$`)
	docSchemaLine   = regexp.MustCompile(`"schema": "([^"]+)"`)
	docPathLike     = regexp.MustCompile(`/|\.(yaml|json|txt|elf|npy|bin|xml|html|csv|gz)$`)
	docOutputFlags  = map[string]bool{"--junit": true, "--save-outputs": true, "--save-inputs": true, "--profile": true, "-O": true, "--out": true, "--dump": true, "--run-dir": true}
	docHostCommands = map[string]string{"devices": "probes this machine's devices", "check-sysemu": "checks an emulator install"}
)

// docExamples reads the example lines of a Markdown file.
func docExamples(t *testing.T, path, name string) []docExample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	inBlock := false
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inBlock = !inBlock
			continue
		}
		cmd, ok := strings.CutPrefix(l, "$ ")
		if !inBlock || !ok || !(strings.HasPrefix(cmd, "et ") || strings.HasPrefix(cmd, "./et ")) {
			continue
		}
		ex := docExample{file: name, line: i + 1}
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		cmd, comment := splitComment(cmd)
		if m := docExitComment.FindStringSubmatch(comment); m != nil {
			ex.exit, _ = strconv.Atoi(m[1])
		}
		ex.text = strings.TrimSpace(cmd)
		for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "$ ") && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```"); j++ {
			if m := docCSVSection.FindStringSubmatch(lines[j]); m != nil {
				ex.sections = append(ex.sections, m[1])
			}
			if m := docSchemaLine.FindStringSubmatch(lines[j]); m != nil {
				ex.schemas = append(ex.schemas, m[1])
			}
		}
		out = append(out, ex)
	}
	return out
}

// splitComment cuts a shell line at a " #" outside quotes.
func splitComment(s string) (cmd, comment string) {
	var q rune
	for i, r := range s {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// shellWords splits a command into words, honouring quotes; operators
// (&&, ||, |, >, >>) are words of their own.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	has := false
	var q rune
	flush := func() {
		if has {
			words = append(words, cur.String())
		}
		cur.Reset()
		has = false
	}
	for _, r := range s {
		switch {
		case q != 0:
			if r == q {
				q = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			q, has = r, true
		case r == ' ' || r == '\t':
			flush()
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	flush()
	return words
}

// docSkip says why an example cannot run here on the reference device
// ("" when it can): another backend, the host's devices, a pipe into
// another tool, or a path of the user's own (one that neither the
// repository nor an earlier example has, and no earlier step of the line
// writes). Paths are relative to root.
func docSkip(words []string, root string) string {
	made := map[string]bool{}
	cmd := ""
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case w == "|":
			return "pipes into another tool"
		case w == "et" || w == "./et":
			cmd = ""
			if i+1 < len(words) {
				cmd = words[i+1]
			}
			if why := docHostCommands[cmd]; why != "" {
				return why
			}
		case prev == "--backend" && w != "ref", prev == "--kind" && w != "ref":
			return "runs on " + w
		case prev == "--shard":
		case docOutputFlags[prev] || prev == ">" || prev == ">>":
			made[strings.TrimSuffix(w, "/")] = true
		case strings.Contains(w, "(") || strings.HasPrefix(w, "-") || !docPathLike.MatchString(w):
		default:
			p := w
			if _, v, ok := strings.Cut(w, "="); ok && !strings.Contains(w[:strings.Index(w, "=")], "/") {
				p = v // a labelled input, name=path
			}
			if _, err := os.Stat(filepath.Join(root, p)); err == nil {
				continue
			}
			if m, _ := filepath.Glob(filepath.Join(root, p)); len(m) > 0 {
				continue
			}
			dir := p
			for dir != "." && dir != "/" && !made[dir] {
				dir = filepath.Dir(dir)
			}
			if !made[dir] && !strings.Contains(p, "*") {
				return "the user's own path " + p
			}
		}
	}
	return ""
}

// TestDocExamples runs every "$ et ..." example of README.md and docs/*.md
// that can run on the reference device (docs/ci.md has its own test,
// TestCIDocExamples), in a directory holding the repository's files, and
// checks what the doc states: the exit code (0 unless its comment says
// "exit N"), and the CSV sections and JSON schemas its block shows of the
// output. Examples that cannot run here (another backend, the host's
// devices, a pipe, a path of the user's own) are logged as skipped.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented example")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var examples []docExample
	examples = append(examples, docExamples(t, filepath.Join(root, "README.md"), "README.md")...)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, d := range docs {
		if filepath.Base(d) != "ci.md" {
			examples = append(examples, docExamples(t, d, "docs/"+filepath.Base(d))...)
		}
	}
	if len(examples) < 40 {
		t.Fatalf("found only %d examples", len(examples))
	}
	dir := t.TempDir()
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	t.Chdir(dir)
	ran, skipped := 0, 0
	for _, ex := range examples {
		words := shellWords(ex.text)
		if why := docSkip(words, dir); why != "" {
			t.Logf("%s:%d: skipped (%s): %s", ex.file, ex.line, why, ex.text)
			skipped++
			continue
		}
		ran++
		where := ex.file + ":" + strconv.Itoa(ex.line)
		t.Run(where, func(t *testing.T) {
			code, stdout := runDocWords(t, words)
			if code != ex.exit {
				t.Fatalf("%s: example %q exits %d, the doc says %d", where, ex.text, code, ex.exit)
			}
			at := 0
			for _, s := range ex.sections {
				i := strings.Index(stdout[at:], "# "+s+"\n")
				if i < 0 {
					t.Errorf("%s: example %q: no CSV section %q (in the doc's order) in its output", where, ex.text, s)
					continue
				}
				at += i
			}
			for _, s := range ex.schemas {
				if !strings.Contains(stdout, `"schema": "`+s+`"`) {
					t.Errorf("%s: example %q: its output is not schema %s", where, ex.text, s)
				}
			}
		})
	}
	t.Logf("%d examples ran, %d skipped", ran, skipped)
}

// runDocWords runs a documented line: et commands joined by && (each run
// only if the one before succeeded), or ending in "|| ..." (not run: the
// exit code is the line's result); "> FILE" and ">> FILE" write stdout
// there; shell globs are expanded. It returns the last exit code and the
// last stdout.
func runDocWords(t *testing.T, words []string) (int, string) {
	t.Helper()
	code, stdout := 0, ""
	for len(words) > 0 {
		end := len(words)
		for i, w := range words {
			if w == "&&" || w == "||" {
				end = i
				break
			}
		}
		step := words[:end]
		var args []string
		redirect, appendOut := "", false
		for i := 1; i < len(step); i++ {
			switch w := step[i]; {
			case (w == ">" || w == ">>") && i+1 < len(step):
				redirect, appendOut = step[i+1], w == ">>"
				i++
			case strings.Contains(w, "*") && !strings.Contains(w, "("):
				m, _ := filepath.Glob(w)
				if len(m) == 0 {
					t.Fatalf("%q matches no file", w)
				}
				args = append(args, m...)
			default:
				args = append(args, w)
			}
		}
		var stderr string
		code, stdout, stderr = runCLI(t, map[string]string{"HOME": t.TempDir()}, args...)
		if code != 0 && stderr != "" {
			t.Logf("stderr: %s", stderr)
		}
		if redirect != "" {
			text := stdout
			if appendOut {
				before, _ := os.ReadFile(redirect)
				text = string(before) + stdout
			}
			if err := os.WriteFile(redirect, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if end == len(words) || words[end] == "||" || code != 0 {
			return code, stdout
		}
		words = words[end+1:]
	}
	return code, stdout
}

// TestDocClaims checks claims of the docs that no example shows.
func TestDocClaims(t *testing.T) {
	// docs/profile.md: a missing map given with --kernel-map is an input
	// error (exit 2), not a warning.
	code, _, errOut := runCLI(t, nil, "profile", "report", "testdata/profile/et_runtime_trace.json", "--kernel-map", filepath.Join(t.TempDir(), "missing.json"))
	if code != exitUsage || !strings.Contains(errOut, "missing.json") {
		t.Errorf("docs/profile.md: a missing --kernel-map: exit %d, stderr %q; the doc says exit 2", code, errOut)
	}
	// profile export's help and note name only viewers that load the file
	// (docs/profile-export-diff.md: chrome://tracing does not).
	_, help, _ := runCLI(t, nil, "profile", "export", "--help")
	out := filepath.Join(t.TempDir(), "x.json")
	_, table, _ := runCLI(t, nil, "profile", "export", "testdata/profile/et_runtime_trace.json", "-O", out)
	if !strings.Contains(table, "ui.perfetto.dev") || strings.Contains(table, "open it in https://ui.perfetto.dev or chrome://tracing") ||
		strings.Contains(help, "ui.perfetto.dev and chrome://tracing open") {
		t.Errorf("profile export still sends users to chrome://tracing:\n%s\n%s", help, table)
	}
	// A doc example whose exit code differs from the doc's is named with
	// its file and line.
	md := filepath.Join(t.TempDir(), "x.md")
	os.WriteFile(md, []byte("```\n$ et version   # exit 1\n$ et version -o csv | cut -d, -f1\n$ et run-op -f testcases/norm.yaml -o csv\n# run\n```\n"), 0o644)
	ex := docExamples(t, md, "docs/x.md")
	if len(ex) != 3 || ex[0].line != 2 || ex[0].exit != 1 || ex[1].exit != 0 || len(ex[2].sections) != 1 ||
		docSkip(shellWords(ex[1].text), ".") != "pipes into another tool" {
		t.Errorf("examples %+v", ex)
	}
}

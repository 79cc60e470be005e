// Package internal_test enforces the import rules of docs/architecture.md
// (which supersede DESIGN.md §1), for internal/ and cmd/et.
package internal_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ainekko/et/"

// allowed lists, per internal package, the internal packages it may
// import: the "imports" block of docs/architecture.md, read by
// loadAllowed. A package not listed may import no internal package.
var allowed map[string][]string

// loadAllowed reads the import rules from docs/architecture.md, so the
// page and the code cannot drift apart.
func loadAllowed(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```imports\n")
	if !ok {
		t.Fatal("docs/architecture.md has no ```imports block")
	}
	block, _, _ = strings.Cut(block, "```")
	rules := map[string][]string{}
	for i, line := range strings.Split(strings.TrimSpace(block), "\n") {
		pkg, deps, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(pkg) == "" {
			t.Fatalf("docs/architecture.md imports block line %d: want \"pkg: dep dep ...\", got %q", i+1, line)
		}
		rules[strings.TrimSpace(pkg)] = strings.Fields(deps)
	}
	return rules
}

// forbiddenExternal may never be imported under internal/.
var forbiddenExternal = []string{
	"github.com/spf13/cobra",
	"github.com/charmbracelet/lipgloss",
	"github.com/olekukonko/tablewriter",
}

// parentOK reports whether pkg may import dep because dep is a private
// helper package nested inside pkg (e.g. internal/profile/internal/x).
func parentOK(pkg, dep string) bool {
	return strings.HasPrefix(dep, pkg+"/internal/")
}

// runSteps are the packages that are steps inside a run: cmd/et calls
// runner, registry, kernelrun, sysemu and profile and renders their typed
// results, and imports none of these (docs/architecture.md).
var runSteps = []string{
	"internal/ops/graph",
	"internal/ops/graph/tbocases",
	"internal/ops/exec",
	"internal/ops/expect",
	"internal/ops/testfile",
	"internal/driver/etrt",
	"internal/driver/ref",
}

// checked reports whether the rules apply to pkg: every internal package,
// and cmd/et (its non-test files).
func checked(pkg string) bool { return strings.HasPrefix(pkg, "internal/") || pkg == "cmd/et" }

func TestImportRules(t *testing.T) {
	allowed = loadAllowed(t)
	touchSources(t)
	for _, tags := range []string{"", "etrt", "etrtfake", "sysemu", "browser"} {
		args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		args = append(args, "./...")
		cmd := exec.Command("go", args...)
		cmd.Dir = ".." // the module's root: cmd/et too
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			pkg := strings.TrimPrefix(fields[0], module)
			if !checked(pkg) {
				continue
			}
			for _, imp := range fields[1:] {
				for _, bad := range forbiddenExternal {
					if pkg != "cmd/et" && (imp == bad || strings.HasPrefix(imp, bad+"/")) {
						t.Errorf("tags %q: %s imports %s: internal packages must not use CLI libraries", tags, pkg, imp)
					}
				}
				if !strings.HasPrefix(imp, module) {
					continue
				}
				dep := strings.TrimPrefix(imp, module)
				if parentOK(pkg, dep) || slices.Contains(allowed[pkg], dep) {
					continue
				}
				t.Errorf("tags %q: forbidden import edge %s -> %s (docs/architecture.md)", tags, pkg, dep)
			}
		}
	}
}

func TestRulesCatchForbiddenEdge(t *testing.T) {
	allowed = loadAllowed(t)
	// The rule table itself must reject the edges DESIGN.md forbids.
	for _, e := range [][2]string{
		{"internal/ops", "internal/driver"},
		{"internal/driver", "internal/ops"},
		{"internal/profile", "internal/ops"},
		{"internal/ops/graph", "internal/ops/plan"},
		{"internal/driver/pcie", "internal/sysemu"},
	} {
		if slices.Contains(allowed[e[0]], e[1]) || parentOK(e[0], e[1]) {
			t.Errorf("edge %s -> %s should be forbidden", e[0], e[1])
		}
	}
	// cmd/et has a rule, and it names none of the steps inside a run.
	if _, ok := allowed["cmd/et"]; !ok {
		t.Error("docs/architecture.md has no rule for cmd/et")
	}
	for _, dep := range runSteps {
		if slices.Contains(allowed["cmd/et"], dep) {
			t.Errorf("edge cmd/et -> %s should be forbidden: cmd/et renders the typed results of runner, registry and kernelrun", dep)
		}
	}
}

// touchSources opens every directory and stats every .go file of the
// module. The go command caches test results keyed on the files a test
// opens; go list runs in a child process, so without this a cached pass
// would survive a change that adds a forbidden import.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "..") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Package internal_test enforces the import rules of DESIGN.md §1.
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

// allowed lists, per internal package, the internal packages it may import
// (DESIGN.md §1). A package not listed may import no internal package.
var allowed = map[string][]string{
	"internal/runner":          {"internal/outfile", "internal/driver/registry", "internal/ops", "internal/ops/abi", "internal/ops/graph", "internal/ops/plan", "internal/ops/exec", "internal/ops/expect", "internal/driver", "internal/driver/ref", "internal/driver/etrt", "internal/driver/pcie", "internal/sysemu", "internal/kernelmap", "internal/profile"},
	"internal/ops/exec":        {"internal/ops", "internal/ops/abi", "internal/ops/plan", "internal/driver", "internal/profile", "internal/kernelmap"},
	"internal/ops/plan":        {"internal/ops", "internal/ops/abi", "internal/kernelmap"},
	"internal/ops/abi":         {"internal/ops"},
	"internal/ops/graph":       {"internal/ops"},
	"internal/ops/testfile":    {"internal/ops", "internal/ops/abi", "internal/ops/graph"},
	"internal/driver/ref":      {"internal/driver", "internal/ops", "internal/ops/abi"},
	"internal/driver/etrt":     {"internal/driver", "internal/sysemu"},
	"internal/driver/pcie":     {"internal/driver"},
	"internal/profile":         {"internal/kernelmap"},
	"internal/outfile":         {},
	"internal/driver/registry": {"internal/driver", "internal/driver/ref", "internal/driver/etrt", "internal/driver/pcie", "internal/ops/abi", "internal/sysemu"},
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

func TestImportRules(t *testing.T) {
	touchSources(t)
	for _, tags := range []string{"", "etrt", "etrtfake"} {
		args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		args = append(args, "./...")
		cmd := exec.Command("go", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			pkg := strings.TrimPrefix(fields[0], module)
			if !strings.HasPrefix(pkg, "internal/") {
				continue
			}
			for _, imp := range fields[1:] {
				for _, bad := range forbiddenExternal {
					if imp == bad || strings.HasPrefix(imp, bad+"/") {
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
				t.Errorf("tags %q: forbidden import edge %s -> %s (DESIGN.md §1)", tags, pkg, dep)
			}
		}
	}
}

func TestRulesCatchForbiddenEdge(t *testing.T) {
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

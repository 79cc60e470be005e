package gen

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the generated files instead of checking them")

// TestFilesUpToDate checks that each generated file in
// internal/ops/refmath/mulmat is what its generator writes now (an edit
// to either wants the other); with -update it writes the file (go
// generate runs it so, a subtest a file).
func TestFilesUpToDate(t *testing.T) {
	for arg, f := range files {
		t.Run(arg, func(t *testing.T) {
			path := filepath.Join("..", f.name)
			if *update {
				if err := os.WriteFile(path, []byte(f.source(arg)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != f.source(arg) {
				t.Errorf("%s is not what gen/%s.go writes: edit the generator, not the file, and run %sgo generate ./internal/ops/refmath/mulmat", f.name, arg, f.env)
			}
		})
	}
}

// TestGenerateLines checks that each generated file has its go:generate
// line, once, in the Go file its header names, that no go:generate line
// of the package names a file gen does not write, and that every file of
// the package marked as generated is gen's.
func TestGenerateLines(t *testing.T) {
	directive := regexp.MustCompile(`(?m)^//go:generate go test \./gen -run \^TestFilesUpToDate\$/\^(\w+)\$ -update$`)
	goFiles, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	for _, path := range goFiles {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range directive.FindAllStringSubmatch(string(src), -1) {
			seen[m[1]] = append(seen[m[1]], filepath.Base(path))
		}
		if n := strings.Count(string(src), "//go:generate"); n != len(directive.FindAllString(string(src), -1)) {
			t.Errorf("%s: a go:generate line that is not %q", filepath.Base(path), "//go:generate "+command("<file>"))
		}
	}
	for arg, f := range files {
		if in := seen[arg]; len(in) != 1 || in[0] != f.decl {
			t.Errorf("//go:generate %s: in %v, want once in %s", command(arg), in, f.decl)
		}
	}
	for arg, in := range seen {
		if _, ok := files[arg]; !ok {
			t.Errorf("%v: //go:generate %s: gen writes no such file", in, command(arg))
		}
	}
	asm, err := filepath.Glob(filepath.Join("..", "*.s"))
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, f := range files {
		mine[f.name] = true
	}
	for _, path := range asm {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(src), "// Code generated ") && !mine[filepath.Base(path)] {
			t.Errorf("%s is marked as generated, but gen does not write it", filepath.Base(path))
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFilesUpToDate checks that each generated file in internal/ops/refmath/mulmat
// is what its generator writes now: an edit to either wants the other.
func TestFilesUpToDate(t *testing.T) {
	for arg, f := range files {
		got, err := os.ReadFile(filepath.Join("..", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != f.source(arg) {
			t.Errorf("%s is not what gen/%s.go writes: edit the generator, not the file, and run %sgo generate ./internal/ops/refmath/mulmat", f.name, arg, f.env)
		}
	}
}

// TestGenerateLines checks that each generated file has its go:generate
// line, once, in the Go file its header names, and that no go:generate
// line of the package names a file gen does not write.
func TestGenerateLines(t *testing.T) {
	directive := regexp.MustCompile(`(?m)^//go:generate go run \./gen (\S+)$`)
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
			t.Errorf("%s: a go:generate line that is not \"go run ./gen <file>\"", filepath.Base(path))
		}
	}
	for arg, f := range files {
		if in := seen[arg]; len(in) != 1 || in[0] != f.decl {
			t.Errorf("//go:generate go run ./gen %s: in %v, want once in %s", arg, in, f.decl)
		}
	}
	for arg, in := range seen {
		if _, ok := files[arg]; !ok {
			t.Errorf("%v: //go:generate go run ./gen %s: gen writes no such file", in, arg)
		}
	}
}

package pcie

import (
	"bufio"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: output differs from golden\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// fixture copies testdata/sysfs/<scenario> into a temporary directory,
// creates the symbolic links its LINKS file lists (git does not keep them
// reliably), and returns the copy's sys and dev roots.
func fixture(t *testing.T, scenario string) (sysRoot, devRoot string) {
	t.Helper()
	src := filepath.Join("testdata", "sysfs", scenario)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "LINKS" {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sysRoot, devRoot = filepath.Join(dst, "sys"), filepath.Join(dst, "dev")
	os.MkdirAll(devRoot, 0o755)
	f, err := os.Open(filepath.Join(src, "LINKS"))
	if err != nil {
		return sysRoot, devRoot
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		link, target, ok := strings.Cut(line, " -> ")
		if !ok {
			t.Fatalf("%s/LINKS: bad line %q", src, line)
		}
		lp := filepath.Join(sysRoot, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(target), lp); err != nil {
			t.Fatal(err)
		}
	}
	return sysRoot, devRoot
}

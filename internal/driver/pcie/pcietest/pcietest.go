// Package pcietest builds the sysfs and /dev fixture trees of the pcie
// tests (internal/driver/pcie/testdata/sysfs/<scenario>) for any package's
// tests. It imports only the standard library.
package pcietest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fixture copies the scenario directory src (a testdata/sysfs/<scenario>
// folder with sys/, dev/ and a LINKS file) into a temporary directory,
// creates the symbolic links LINKS lists ("link -> target" per line; git
// does not keep symlinks reliably), and returns the copy's sys and dev
// roots.
func Fixture(t testing.TB, src string) (sysRoot, devRoot string) {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch {
		case rel == "LINKS":
			return nil
		case d.IsDir():
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
	links, err := os.ReadFile(filepath.Join(src, "LINKS"))
	if os.IsNotExist(err) {
		return sysRoot, devRoot
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(links))
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

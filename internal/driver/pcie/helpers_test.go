package pcie

import (
	"flag"
	"github.com/ainekko/et/internal/driver/pcie/pcietest"
	"os"
	"path/filepath"
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

// fixture builds testdata/sysfs/<scenario> in a temporary directory.
func fixture(t *testing.T, scenario string) (sysRoot, devRoot string) {
	t.Helper()
	return pcietest.Fixture(t, filepath.Join("testdata", "sysfs", scenario))
}

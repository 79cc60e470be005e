//go:build unix

package expect

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "xf.yaml")
	os.WriteFile(p, []byte(sample), 0o644)
	s, err := Load(p)
	if err != nil || len(s.Entries) != 3 || s.Entries[0].File != p {
		t.Fatalf("Load = %v, %v", s, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml: cannot read: no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// No writer: opening the FIFO would block, so Load must refuse it
	// before it opens anything.
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, make([]byte, maxFileBytes+10), 0o644)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
}

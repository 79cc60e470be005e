//go:build linux && (amd64 || arm64 || riscv64)

package pcie

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOSNodesRefuseFiles checks that the real opener never sends an ioctl
// to something that is not a character device (fixture trees hold regular
// files where /dev has nodes).
func TestOSNodesRefuseFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "et0_ops")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, result, errPart string
	}{
		{"regular file", file, NodeError, "not a character device"},
		{"directory", dir, NodeError, "not a character device"},
		{"missing", filepath.Join(dir, "et9_ops"), NodeAbsent, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := OSNodes().Open(tt.path)
			if err == nil {
				n.Close()
				t.Fatal("Open succeeded")
			}
			if classify(err) != tt.result || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("Open: %v (%s), want %s containing %q", err, classify(err), tt.result, tt.errPart)
			}
		})
	}
}

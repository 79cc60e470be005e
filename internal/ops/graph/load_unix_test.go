//go:build unix

package graph

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLoadNpyErrors(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "npy", "f4_2x3_v1.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.npy"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.npy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.npy")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tensor, want string
	}{
		{"missing file", "{type: f32, ne: [3, 2], init: {npy: nope.npy}}", "nope.npy: no such file or directory"},
		{"fifo", "{type: f32, ne: [3, 2], init: {npy: fifo.npy}}", "fifo.npy: not a regular file"},
		{"endless device", "{type: f32, ne: [3, 2], init: {npy: zero.npy}}", "zero.npy: not a regular file"},
		{"shape mismatch", "{type: f32, ne: [2, 3], init: {npy: x.npy}}", "x.npy: shape (2, 3) does not match tensor x ne [2 3] (want numpy shape (3, 2)"},
		{"float data for int tensor", "{type: i32, ne: [3, 2], init: {npy: x.npy}}", "x.npy: tensor x is i32: dtype <f4 holds floats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "name: t\ntensors:\n  x: " + tt.tensor + "\nnodes:\n  - {name: y, op: cont, src: [x]}\n"
			c, err := LoadBytes("case.yaml", []byte(y), dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Materialize(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "case.yaml:3: tensor x: "+dir) {
				t.Fatalf("error = %v, want case.yaml:3: tensor x: and %q", err, tt.want)
			}
			var ie interface{ InputError() }
			if !errors.As(err, &ie) {
				t.Errorf("error %T does not implement InputError", err)
			}
		})
	}
}

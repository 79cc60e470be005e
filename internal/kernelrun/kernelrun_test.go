package kernelrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/kernelargs"
)

// isInput reports bad input (et exits 2).
func isInput(err error) bool {
	var ie interface{ InputError() }
	return errors.As(err, &ie)
}

func TestKernelBufInit(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "a.bin")
	os.WriteFile(raw, []byte{1, 2, 3}, 0o644)
	got, err := bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 8, Init: raw})
	if err != nil || !bytes.Equal(got, []byte{1, 2, 3, 0, 0, 0, 0, 0}) {
		t.Errorf("file init = %v, %v", got, err)
	}
	got, _ = bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 10, Init: "pattern"})
	if !bytes.Equal(got, []byte{0, 0, 0, 0, 1, 0, 0, 0, 0, 0}) {
		t.Errorf("pattern = %v", got)
	}
	if _, err := bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 2, Init: raw}); !isInput(err) || !strings.Contains(err.Error(), "holds 3 bytes") {
		t.Errorf("too long: %v", err)
	}
	if _, err := bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 2, Init: filepath.Join(dir, "nope")}); !isInput(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteKernelDumpNpy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.npy")
	if err := writeDump(context.Background(), path, []byte{9, 8, 7}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	hlen := int(b[8]) | int(b[9])<<8
	if !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) || (10+hlen)%64 != 0 || !bytes.Equal(b[10+hlen:], []byte{9, 8, 7}) ||
		!strings.Contains(string(b[10:10+hlen]), "'descr': '|u1'") || !strings.Contains(string(b[10:10+hlen]), "(3,)") {
		t.Errorf("npy = %q", b)
	}
}

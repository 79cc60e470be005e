package kernelrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/kernelargs"
	"github.com/ainekko/et/internal/sysemu/sysemutest"
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

// A run whose buffers do not fit in host memory is refused before
// anything is allocated or read (--buf a=16G died of an out-of-memory
// crash): exit 2 with the figures.
func TestRunAdmitsHostMemory(t *testing.T) {
	o := Options{ELF: "k.elf", Name: "k", Bufs: []kernelargs.Buf{{Name: "a", Size: 16 << 30, Init: "zeros"}},
		Dumps: []kernelargs.Dump{{Name: "a", File: "a.bin"}}, MaxHostMemory: 1 << 30, Spec: registry.Spec{Backend: "ref"}}
	if got, want := HostBytes(o), uint64(64<<30+kernelargs.MaxParams); got != want {
		t.Errorf("HostBytes = %d, want %d (buffer and device copy, dump and its file, params)", got, want)
	}
	_, err := Run(context.Background(), o)
	if !isInput(err) || !strings.Contains(err.Error(), "needs about 64.0 GiB of host memory, 1 GiB is allowed by --max-host-memory") {
		t.Errorf("16 GiB buffer with 1 GiB allowed: %v", err)
	}
}

// Files named by --buf and --arg file: are bounded by what they fill,
// and refused by their size before they are read.
func TestKernelInputsBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.npy")
	if err := os.WriteFile(big, nil, 0o644); err != nil || os.Truncate(big, 1<<40) != nil {
		t.Skip("no sparse files here")
	}
	if _, err := bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 4096, Init: big}); !isInput(err) || !strings.Contains(err.Error(), "more than a .npy of the 4096 data bytes wanted can be") {
		t.Errorf(".npy of 1 TiB for a 4 KiB buffer: %v", err)
	}
	raw := filepath.Join(dir, "big.bin")
	os.Rename(big, raw)
	if _, err := bufInit(context.Background(), kernelargs.Buf{Name: "a", Size: 4096, Init: raw}); !isInput(err) || !strings.Contains(err.Error(), "holds 1099511627776 bytes, more than the buffer's 4096") {
		t.Errorf("raw file of 1 TiB for a 4 KiB buffer: %v", err)
	}
	args, _ := kernelargs.ParseArgs([]string{"file:" + raw}, nil)
	elf := filepath.Join(dir, "k.elf")
	os.WriteFile(elf, sysemutest.Kernel().Bytes(), 0o644)
	_, err := Run(context.Background(), Options{ELF: elf, Name: "k", Args: args, Spec: registry.Spec{Backend: "ref"}})
	if !isInput(err) || !strings.Contains(err.Error(), "1 TiB, over the 1 MiB that et reads for it") {
		t.Errorf("--arg file: of 1 TiB: %v", err)
	}
}

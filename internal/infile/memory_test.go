package infile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdmitMemory(t *testing.T) {
	err := AdmitMemory("the case", 64<<30, 1<<30)
	var ie *Error
	if !errors.As(err, &ie) || err.Error() != "the case needs about 64 GiB of host memory, 1 GiB is allowed by --max-host-memory" {
		t.Errorf("64 GiB against 1 GiB: %v, want an *Error with both figures", err)
	}
	if err := AdmitMemory("the case", 1<<30, 1<<30); err != nil {
		t.Errorf("exactly the limit: %v", err)
	}
	if avail := MemAvailable(); avail > 0 {
		err := AdmitMemory("x", avail+1<<40, 0)
		if err == nil || !strings.HasSuffix(err.Error(), "is available") {
			t.Errorf("over MemAvailable: %v", err)
		}
		// A --max-host-memory above MemAvailable does not raise it.
		if err := AdmitMemory("x", avail+1<<40, avail+1<<41); err == nil || !strings.HasSuffix(err.Error(), "is available") {
			t.Errorf("over MemAvailable with a larger max: %v", err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]uint64{"4096": 4096, "0x1000": 4096, "64K": 64 << 10, "1M": 1 << 20, "2GiB": 2 << 30, "1T": 1 << 40, "16G": 16 << 30} {
		if got, err := ParseSize(s, 1<<50); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "1.5G", "G", "17G", "18446744073709551615K"} {
		if _, err := ParseSize(s, 16<<30); err == nil {
			t.Errorf("ParseSize(%q): no error", s)
		}
	}
}

// A regular file over its input's bound is refused before it is read: a
// sparse file of 1 TiB costs nothing (a case file with a 1 GiB string
// took 98 s and 5.3 GB before its error).
func TestReadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil || os.Truncate(path, 1<<40) != nil {
		t.Skip("no sparse files here")
	}
	_, err := ReadFile(context.Background(), path, MaxText)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "1 TiB, over the 64 MiB that et reads for it" {
		t.Errorf("1 TiB file: %v, want a *TooLargeError", err)
	}
	os.Truncate(path, MaxText)
	if b, err := ReadFile(context.Background(), path, MaxText); err != nil || len(b) != MaxText {
		t.Errorf("a file of exactly the bound: %d bytes, %v", len(b), err)
	}
}

//go:build unix

package infile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A read blocked on a FIFO nobody writes ends when the context does.
func TestReadInputSeesContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := ReadFile(ctx, fifo, MaxText)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("readInput = %v, want context.Canceled", err)
	}
	pr, pw, _ := os.Pipe()
	defer pw.Close()
	ctx, cancel = context.WithCancel(context.Background())
	r, err := Open(ctx, "-", pr, MaxTrace)
	if err != nil {
		t.Fatal(err)
	}
	go cancel()
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Errorf("stdin pipe read = %v, want context.Canceled", err)
	}
}

//go:build unix

package outfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Output files are never a device node or a link replaced by a regular
// file: links are followed, devices and FIFOs written through.
func TestAtomicFileTargets(t *testing.T) {
	dir := t.TempDir()
	t.Run("link to a regular file", func(t *testing.T) {
		target := filepath.Join(dir, "target.txt")
		os.WriteFile(target, []byte("old"), 0o644)
		link := filepath.Join(dir, "link.txt")
		os.Symlink("target.txt", link)
		if err := WriteFile(link, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("link replaced: %v %v", fi.Mode(), err)
		}
		if b, _ := os.ReadFile(target); string(b) != "new" {
			t.Errorf("target holds %q", b)
		}
	})
	t.Run("dangling link", func(t *testing.T) {
		link := filepath.Join(dir, "dangling")
		os.Symlink("made.txt", link)
		if err := WriteFile(link, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "x" {
			t.Errorf("made.txt holds %q", b)
		}
	})
	t.Run("link to /dev/null", func(t *testing.T) {
		link := filepath.Join(dir, "null")
		os.Symlink("/dev/null", link)
		if err := WriteFile(link, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("link replaced: %v %v", fi.Mode(), err)
		}
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("/dev/null is no longer a device: %v %v", fi.Mode(), err)
		}
	})
	t.Run("link to /dev/full", func(t *testing.T) {
		link := filepath.Join(dir, "full")
		os.Symlink("/dev/full", link)
		err := WriteFile(link, []byte("x"))
		if !isWriteError(err) || err.Error() != "write "+link+": no space left on device" {
			t.Errorf("err %v want a *WriteError naming %s", err, link)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip(err)
		}
		got := make(chan string)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- string(b)
		}()
		if err := WriteFile(fifo, []byte("through")); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "through" {
			t.Errorf("reader got %q", s)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("FIFO replaced: %v %v", fi.Mode(), err)
		}
	})
	t.Run("socket is refused", func(t *testing.T) {
		sock := filepath.Join(dir, "s")
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Skip(err)
		}
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			t.Skip(err)
		}
		err = WriteFile(sock, []byte("x"))
		if !isPathError(err) || !strings.Contains(err.Error(), "refusing to replace it") {
			t.Errorf("err %v", err)
		}
		if fi, _ := os.Lstat(sock); fi.Mode()&fs.ModeSocket == 0 {
			t.Errorf("socket replaced")
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		p := filepath.Join(dir, "nope", "x")
		err := WriteFile(p, []byte("x"))
		if !isPathError(err) || err.Error() != "write "+p+": no such file or directory" {
			t.Errorf("err %v", err)
		}
	})
}

// A FIFO nobody reads does not hang the command: the wait for a reader
// ends with the context (Ctrl-C), and the FIFO is left as it was.
func TestFIFOWithoutReader(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- WriteFileContext(ctx, fifo, []byte("x")) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("FIFO replaced: %v %v", fi.Mode(), err)
	}
}

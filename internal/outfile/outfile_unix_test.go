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
		if err := WriteFileContext(context.Background(), link, []byte("new")); err != nil {
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
		if err := WriteFileContext(context.Background(), link, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "x" {
			t.Errorf("made.txt holds %q", b)
		}
	})
	t.Run("link to /dev/null", func(t *testing.T) {
		link := filepath.Join(dir, "null")
		os.Symlink("/dev/null", link)
		if err := WriteFileContext(context.Background(), link, []byte("x")); err != nil {
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
		err := WriteFileContext(context.Background(), link, []byte("x"))
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
		if err := WriteFileContext(context.Background(), fifo, []byte("through")); err != nil {
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
		err = WriteFileContext(context.Background(), sock, []byte("x"))
		if !isPathError(err) || !strings.Contains(err.Error(), "refusing to replace it") {
			t.Errorf("err %v", err)
		}
		if fi, _ := os.Lstat(sock); fi.Mode()&fs.ModeSocket == 0 {
			t.Errorf("socket replaced")
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		p := filepath.Join(dir, "nope", "x")
		err := WriteFileContext(context.Background(), p, []byte("x"))
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

// An output that is one of the command's inputs — the same path, a link
// to it or a hard link — is refused before anything is written, and the
// input is left as it was (issue 33: profile export T -O T).
func TestRefuseInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.json")
	os.WriteFile(in, []byte("input"), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink("trace.json", link)
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	ctx := WithInputs(context.Background(), "-", filepath.Join(dir, "missing"), link)
	for _, p := range []string{in, link, hard, filepath.Join(dir, ".", "x", "..", "trace.json")} {
		err := WriteFileContext(ctx, p, []byte("output"))
		if !isPathError(err) || !strings.Contains(err.Error(), "refusing to overwrite an input") {
			t.Errorf("%s: got %v, want a refusal", p, err)
		}
		if _, err := CreateContext(ctx, p); !isPathError(err) {
			t.Errorf("CreateContext %s: got %v", p, err)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "input" {
		t.Errorf("input now holds %q", b)
	}
	if err := WriteFileContext(ctx, other, []byte("output")); err != nil {
		t.Errorf("another file: %v", err)
	}
	// Without inputs the same path is written.
	if err := WriteFileContext(context.Background(), in, []byte("new")); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("left behind: %v", ents)
	}
}

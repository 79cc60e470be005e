package main

import (
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
		if err := writeFileAtomic(link, []byte("new")); err != nil {
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
		if err := writeFileAtomic(link, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "x" {
			t.Errorf("made.txt holds %q", b)
		}
	})
	t.Run("link to /dev/null", func(t *testing.T) {
		link := filepath.Join(dir, "null")
		os.Symlink("/dev/null", link)
		if err := writeFileAtomic(link, []byte("x")); err != nil {
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
		err := writeFileAtomic(link, []byte("x"))
		if exitCode(err) != exitInternal || err.Error() != "write "+link+": no space left on device" {
			t.Errorf("err %v (exit %d), want exit 5 naming %s", err, exitCode(err), link)
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
		if err := writeFileAtomic(fifo, []byte("through")); err != nil {
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
		err = writeFileAtomic(sock, []byte("x"))
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "refusing to replace it") {
			t.Errorf("err %v", err)
		}
		if fi, _ := os.Lstat(sock); fi.Mode()&fs.ModeSocket == 0 {
			t.Errorf("socket replaced")
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		p := filepath.Join(dir, "nope", "x")
		err := writeFileAtomic(p, []byte("x"))
		if exitCode(err) != exitUsage || err.Error() != "write "+p+": no such file or directory" {
			t.Errorf("err %v", err)
		}
	})
}

// The commands' output flags go through atomicFile: --junit, profile
// export -O and run-kernel --dump.
func TestOutputFlagsKeepLinks(t *testing.T) {
	dir := t.TempDir()
	link := func(name string) string {
		p := filepath.Join(dir, name)
		os.Symlink("/dev/null", p)
		return p
	}
	full := func(name string) string {
		p := filepath.Join(dir, name)
		os.Symlink("/dev/full", p)
		return p
	}
	check := func(t *testing.T, p string) {
		t.Helper()
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s replaced by a regular file", p)
		}
	}
	t.Run("junit", func(t *testing.T) {
		p := link("junit.xml")
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--junit", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
		p = full("junit-full.xml")
		code, _, errOut = runCLI(t, nil, "run-op", "-f", "../../testcases/binary.yaml", "--junit", p)
		if code != exitInternal || !strings.Contains(errOut, "write "+p+": no space left on device") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("profile export", func(t *testing.T) {
		p := link("trace.chrome.json")
		code, _, errOut := runCLI(t, nil, "profile", "export", "testdata/profile/et_runtime_trace.json", "-O", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
		p = full("trace-full.json")
		code, _, errOut = runCLI(t, nil, "profile", "export", "testdata/profile/et_runtime_trace.json", "-O", p)
		if code != exitInternal || !strings.Contains(errOut, "write "+p+": no space left on device") || strings.Contains(errOut, ".tmp") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("run-kernel dump", func(t *testing.T) {
		p := link("x.bin")
		code, _, errOut := runCLI(t, nil, "run-kernel", writeKernelFile(t, "rms_norm_f32"), "--buf", "x=64:pattern",
			"--arg", "pad:680", "--dump", "x="+p)
		if code != exitNegative { // all-zero params fault, as in TestRunKernelRef
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, p)
	})
}

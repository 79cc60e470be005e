package main

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/graph"
)

// atomicFile is an output file written to a temp file beside its path and
// renamed into place on Commit, so a failure or an interrupt never leaves
// a half-written file. Errors name the destination (never the temp file).
//
// What is not a regular file is never replaced: a symbolic link is
// followed and the file it names is replaced (the link stays); a character
// device (/dev/null, /dev/full, a terminal) or a FIFO is written through,
// as a shell redirection would; a block device, socket or directory is
// refused (exit 2).
type atomicFile struct {
	*os.File
	path string
	// direct: File is the destination itself (a device or FIFO), there is
	// no temp file.
	direct bool
}

// maxSymlinks bounds the links followed to a destination (as Linux does).
const maxSymlinks = 40

// resolveOutput follows the symbolic links of an output path to the file
// they name, which may not exist yet.
func resolveOutput(path string) (string, error) {
	p := path
	for range maxSymlinks {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return "", syscall.ELOOP
}

// createAtomic starts writing path.
func createAtomic(path string) (*atomicFile, error) {
	dst, err := resolveOutput(path)
	if err != nil {
		return nil, writeError(path, err)
	}
	if fi, err := os.Stat(dst); err == nil && !fi.Mode().IsRegular() {
		m := fi.Mode()
		switch {
		case m.IsDir():
			return nil, inputErrorf("write %s: is a directory", path)
		case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
			fh, err := os.OpenFile(dst, os.O_WRONLY, 0)
			if err != nil {
				return nil, writeError(path, err)
			}
			return &atomicFile{File: fh, path: path, direct: true}, nil
		default:
			return nil, inputErrorf("write %s: not a regular file, a character device or a FIFO (%s); refusing to replace it", path, m.Type())
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return nil, writeError(path, err)
	}
	// CreateTemp makes the file 0600; results are ordinary files.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, writeError(path, err)
	}
	return &atomicFile{File: tmp, path: dst}, nil
}

// Commit closes the temp file and renames it to the destination (or, for
// a device or FIFO, closes it).
func (a *atomicFile) Commit() error {
	if a.direct {
		if err := a.File.Close(); err != nil {
			return writeError(a.path, err)
		}
		return nil
	}
	if err := a.File.Close(); err != nil {
		os.Remove(a.Name())
		return writeError(a.path, err)
	}
	if err := os.Rename(a.Name(), a.path); err != nil {
		os.Remove(a.Name())
		return writeError(a.path, err)
	}
	return nil
}

// Abort discards the temp file; after Commit it does nothing.
func (a *atomicFile) Abort() {
	a.File.Close()
	if !a.direct {
		os.Remove(a.Name())
	}
}

// writeFileAtomic writes data to path through an atomicFile.
func writeFileAtomic(path string, data []byte) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return writeError(path, err)
	}
	return a.Commit()
}

// writeTensorNpy saves a tensor as a float32 .npy file through an
// atomicFile.
func writeTensorNpy(path string, t *ops.Tensor) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(a, 1<<20)
	err = graph.EncodeNpyF32(w, graph.NpyShape(t.Ne[:]), t.ToF32())
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		a.Abort()
		return writeError(path, err)
	}
	return a.Commit()
}

// writeError is a failure to write an output file, naming it: exit 2 when
// the path is wrong (no such directory, no permission, not a directory),
// exit 5 when the write itself failed (disk full, I/O error).
func writeError(path string, err error) error {
	if isPathError(err) {
		return inputErrorf("write %s: %v", path, errText(err))
	}
	return ioErrorf("write %s: %v", path, errText(err))
}

// isPathError tells whether err is about the path rather than the write.
func isPathError(err error) bool {
	for _, e := range []error{fs.ErrNotExist, fs.ErrPermission, fs.ErrExist,
		syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.EROFS, syscall.ENXIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

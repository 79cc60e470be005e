// Package outfile writes the files a command produces so that a failure
// or an interrupt never leaves a half-written one, and so that what is
// not a regular file is never replaced.
//
// A file is written to a temp file beside its path and renamed into place
// on Commit. A symbolic link is followed and the file it names is replaced
// (the link stays); a character device (/dev/null, /dev/full, a terminal)
// or a FIFO is written through, as a shell redirection would; a block
// device, socket or directory is refused. Errors name the destination,
// never the temp file: a *PathError when the path is wrong (no such
// directory, no permission, not a file that may be written: bad input), a
// *WriteError when the write itself failed (disk full, I/O error).
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ainekko/et/internal/infile"
)

// PathError is an output path that cannot be written: bad input.
type PathError struct {
	Path string
	Msg  string
}

func (e *PathError) Error() string { return "write " + e.Path + ": " + e.Msg }

// InputError marks PathError as bad user input (exit 2).
func (e *PathError) InputError() {}

// WriteError is a write that failed (disk full, I/O error): neither the
// user's input nor a verdict.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return "write " + e.Path + ": " + infile.ErrText(e.Err) }
func (e *WriteError) Unwrap() error { return e.Err }

// File is an output file being written.
type File struct {
	*os.File
	path string
	// direct: File is the destination itself (a device or FIFO), there is
	// no temp file.
	direct bool
}

// maxSymlinks bounds the links followed to a destination (as Linux does).
const maxSymlinks = 40

// resolve follows the symbolic links of an output path to the file they
// name, which may not exist yet.
func resolve(path string) (string, error) {
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

// Create starts writing path. A FIFO without a reader waits for one.
func Create(path string) (*File, error) { return CreateContext(context.Background(), path) }

// CreateContext is Create where waiting for a FIFO's reader ends when ctx
// does (an interrupt), with ctx's error.
func CreateContext(ctx context.Context, path string) (*File, error) {
	dst, err := resolve(path)
	if err != nil {
		return nil, classify(path, err)
	}
	if fi, err := os.Stat(dst); err == nil && !fi.Mode().IsRegular() {
		m := fi.Mode()
		switch {
		case m.IsDir():
			return nil, &PathError{Path: path, Msg: "is a directory"}
		case m&fs.ModeNamedPipe != 0:
			fh, err := openFIFO(ctx, dst)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				return nil, classify(path, err)
			}
			return &File{File: fh, path: path, direct: true}, nil
		case m&fs.ModeCharDevice != 0:
			fh, err := os.OpenFile(dst, os.O_WRONLY, 0)
			if err != nil {
				return nil, classify(path, err)
			}
			return &File{File: fh, path: path, direct: true}, nil
		default:
			return nil, &PathError{Path: path, Msg: fmt.Sprintf("not a regular file, a character device or a FIFO (%s); refusing to replace it", m.Type())}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return nil, classify(path, err)
	}
	// CreateTemp makes the file 0600; results are ordinary files.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, classify(path, err)
	}
	return &File{File: tmp, path: dst}, nil
}

// Fail is err, a failed write to f, as this package's error naming the
// destination.
func (f *File) Fail(err error) error { return classify(f.path, err) }

// Commit closes the temp file and renames it to the destination (or, for
// a device or FIFO, closes it).
func (f *File) Commit() error {
	if f.direct {
		if err := f.File.Close(); err != nil {
			return classify(f.path, err)
		}
		return nil
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.Name())
		return classify(f.path, err)
	}
	if err := os.Rename(f.Name(), f.path); err != nil {
		os.Remove(f.Name())
		return classify(f.path, err)
	}
	return nil
}

// Abort discards the temp file; after Commit it does nothing.
func (f *File) Abort() {
	f.File.Close()
	if !f.direct {
		os.Remove(f.Name())
	}
}

// WriteFile writes data to path through a File.
func WriteFile(path string, data []byte) error {
	return WriteFileContext(context.Background(), path, data)
}

// WriteFileContext is WriteFile with CreateContext's ctx.
func WriteFileContext(ctx context.Context, path string, data []byte) error {
	f, err := CreateContext(ctx, path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return classify(path, err)
	}
	return f.Commit()
}

// classify is err as a *PathError when it is about the path (no such
// directory, no permission, not a directory), else a *WriteError.
func classify(path string, err error) error {
	var pe *PathError
	var we *WriteError
	if errors.As(err, &pe) || errors.As(err, &we) {
		return err
	}
	for _, e := range []error{fs.ErrNotExist, fs.ErrPermission, fs.ErrExist,
		syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.EROFS, syscall.ENXIO} {
		if errors.Is(err, e) {
			return &PathError{Path: path, Msg: infile.ErrText(err)}
		}
	}
	return &WriteError{Path: path, Err: err}
}

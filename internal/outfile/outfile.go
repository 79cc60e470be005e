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
//
// A command names the files it reads with WithInputs; a destination that
// is one of them (the same device and inode, links and hard links
// resolved) is refused before anything is written, so that no command
// ever overwrites its own input.
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

type inputsKey struct{}

// input is a file a command reads, as it was when the command named it.
type input struct {
	path string
	fi   fs.FileInfo
}

// WithInputs is ctx carrying, besides those it already carries, the
// files at paths (followed through links) as inputs that CreateContext
// refuses to write over. Paths that do not exist, "-" (stdin) and what is
// not a regular file are skipped: only a regular file can be replaced.
func WithInputs(ctx context.Context, paths ...string) context.Context {
	in, _ := ctx.Value(inputsKey{}).([]input)
	in = in[:len(in):len(in)] // append copies: ctx's parent keeps its list
	n := len(in)
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			in = append(in, input{path: p, fi: fi})
		}
	}
	if len(in) == n {
		return ctx
	}
	return context.WithValue(ctx, inputsKey{}, in)
}

// CheckNotInput fails, as CreateContext would, when path is one of ctx's
// inputs: for a command to refuse before it runs rather than after.
func CheckNotInput(ctx context.Context, path string) error {
	dst, err := resolve(path)
	if err != nil {
		return nil // CreateContext reports it
	}
	if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() {
		return checkNotInput(ctx, path, fi)
	}
	return nil
}

// checkNotInput fails when dst, an existing regular file, is one of
// ctx's inputs.
func checkNotInput(ctx context.Context, path string, dst fs.FileInfo) error {
	in, _ := ctx.Value(inputsKey{}).([]input)
	for _, i := range in {
		if os.SameFile(i.fi, dst) {
			what := "is the input " + i.path
			if i.path != path {
				what = "is the same file as the input " + i.path
			}
			return &PathError{Path: path, Msg: what + "; refusing to overwrite an input"}
		}
	}
	return nil
}

// CreateContext starts writing path. A FIFO without a reader waits for
// one, until ctx ends (an interrupt), with ctx's error. A path that is one
// of ctx's inputs (WithInputs) is refused.
func CreateContext(ctx context.Context, path string) (*File, error) {
	dst, err := resolve(path)
	if err != nil {
		return nil, classify(path, err)
	}
	if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() {
		if err := checkNotInput(ctx, path, fi); err != nil {
			return nil, err
		}
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

// WriteFileContext writes data to path through a File (CreateContext).
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

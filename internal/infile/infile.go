// Package infile reads the input files a command is given, as outfile
// writes its outputs.
//
// Inputs named by the user may be anything: a FIFO nobody writes, a pipe
// from a slow producer, /dev/zero. A regular file is read as it is (its
// size bounds it). Anything else is opened and read on a goroutine, so
// that a signal (ctx) ends a blocked open or read at once, and with a
// bound, so that an endless device fails with an error naming the path
// instead of filling memory or the disk.
package infile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// Bounds on inputs: a regular file over its bound is refused before it
// is read, anything else is read up to it (docs/exit-codes.md lists every
// input's bound).
const (
	MaxText  = 64 << 20 // case YAML, test files, kernel maps, shard reports
	MaxTrace = 4 << 30  // traces from a pipe or FIFO
)

// Error is an input that cannot be used: a file that cannot be read, or
// that says something wrong. It is bad user input (exit 2).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// InputError marks Error as bad user input.
func (e *Error) InputError() {}

// Errorf is an *Error with a formatted message.
func Errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// ErrText is the reason of a file error without the operation and path
// an *os.PathError or *os.LinkError repeats ("no such file or
// directory"), for messages that name the path themselves.
func ErrText(err error) string {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}

// IsRegular tells whether path names a regular file (following links).
// Stat never blocks, even on a FIFO.
func IsRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ReadFile reads a whole input of at most limit bytes: the documented
// cap of that kind of input (MaxText ...). Errors are the open or read
// error (an *os.PathError), the context's error, a *TooLargeError for a
// regular file over limit (refused before it is read), or, past limit
// bytes of something that is not a regular file, an error saying so.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("is a directory")
	}
	if fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return nil, &TooLargeError{Size: fi.Size(), Limit: limit}
		}
		return readRegular(path, limit)
	}
	r := newCtxReader(ctx, limit, func() (io.ReadCloser, error) { return os.Open(path) })
	defer r.Close()
	return io.ReadAll(r)
}

// TooLargeError is a regular file larger than its kind of input may be.
type TooLargeError struct{ Size, Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s, over the %s that et reads for it", SizeText(uint64(e.Size)), SizeText(uint64(e.Limit)))
}

// readRegular reads a regular file, and no more than limit bytes of it
// should it grow while it is read.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// Open opens a stream input for reading: "-" is stdin. A regular file
// (or stdin redirected from one) is returned as an *os.File; anything else
// as a reader bounded by limit that ends when ctx does.
func Open(ctx context.Context, path string, stdin io.Reader, limit int64) (io.ReadCloser, error) {
	if path == "-" {
		if fh, ok := stdin.(*os.File); ok {
			if fi, err := fh.Stat(); err == nil && fi.Mode().IsRegular() {
				return io.NopCloser(fh), nil
			}
			return newCtxReader(ctx, limit, func() (io.ReadCloser, error) { return io.NopCloser(fh), nil }), nil
		}
		return io.NopCloser(stdin), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("is a directory")}
	}
	if fi.Mode().IsRegular() {
		return os.Open(path)
	}
	return newCtxReader(ctx, limit, func() (io.ReadCloser, error) { return os.Open(path) }), nil
}

// asyncReader reads from a source opened and read on its own goroutine: a
// Read returns the context's error as soon as ctx is done, even while the
// open or the read of the source is blocked (the goroutine is then left
// to end with the process).
type asyncReader struct {
	ctx   context.Context
	limit int64
	n     int64
	ch    chan asyncChunk
	buf   []byte
	err   error
	// closed tells the goroutine to stop; src is closed with it.
	closed chan struct{}
}

type asyncChunk struct {
	b   []byte
	err error
}

const asyncChunkSize = 256 << 10

func newCtxReader(ctx context.Context, limit int64, open func() (io.ReadCloser, error)) *asyncReader {
	r := &asyncReader{ctx: ctx, limit: limit, ch: make(chan asyncChunk), closed: make(chan struct{})}
	go func() {
		src, err := open()
		if err != nil {
			select {
			case r.ch <- asyncChunk{err: err}:
			case <-r.closed:
			case <-ctx.Done():
			}
			return
		}
		defer src.Close()
		for {
			b := make([]byte, asyncChunkSize)
			n, err := src.Read(b)
			select {
			case r.ch <- asyncChunk{b: b[:n], err: err}:
			case <-r.closed:
				return
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *asyncReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		select {
		case <-r.ctx.Done():
			r.err = r.ctx.Err()
			return 0, r.err
		case c := <-r.ch:
			r.buf, r.err = c.b, c.err
			r.n += int64(len(c.b))
			if r.n > r.limit {
				r.buf, r.err = nil, fmt.Errorf("not a regular file and longer than %s (et reads no more than that from a pipe, FIFO or device)", SizeText(uint64(r.limit)))
			}
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close stops the reading goroutine (at its next chunk).
func (r *asyncReader) Close() error {
	select {
	case <-r.closed:
	default:
		close(r.closed)
	}
	return nil
}

// Clip is s cut to at most n bytes (at a rune boundary), saying how many
// bytes were cut: how an error or warning quotes a long input string.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)-cut) + " more bytes)"
}

// SizeText is a size with binary units as et's tables write it: "512 B",
// "64 MiB" (exact multiples without a decimal), "1.5 GiB".
func SizeText(b uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for x := b; x >= 1024 && i < len(units)-1; x /= 1024 {
		i++
	}
	if i == 0 {
		return strconv.FormatUint(b, 10) + " B"
	}
	div := uint64(1) << (10 * i)
	if b%div == 0 {
		return strconv.FormatUint(b/div, 10) + " " + units[i]
	}
	return strconv.FormatFloat(float64(b)/float64(div), 'f', 1, 64) + " " + units[i]
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Inputs named by the user may be anything: a FIFO nobody writes, a pipe
// from a slow producer, /dev/zero. A regular file is read as it is (its
// size bounds it). Anything else is opened and read on a goroutine, so
// that a signal (ctx) ends a blocked open or read at once, and with a
// bound, so that an endless device fails with an error naming the path
// instead of filling memory or the disk.

// Bounds on inputs that are not regular files.
const (
	maxTextInput  = 64 << 20 // case YAML, kernel maps, --arg file:, raw --buf init
	maxTraceInput = 4 << 30  // traces from a pipe or FIFO
)

// isRegular tells whether path names a regular file (following links).
// Stat never blocks, even on a FIFO.
func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// readInput reads a whole input. Errors are the open or read error (an
// *os.PathError), the context's error, or, past limit bytes of something
// that is not a regular file, an error saying so.
func readInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("is a directory")
	}
	if fi.Mode().IsRegular() {
		return os.ReadFile(path)
	}
	r := newCtxReader(ctx, limit, func() (io.ReadCloser, error) { return os.Open(path) })
	defer r.Close()
	return io.ReadAll(r)
}

// openInput opens a stream input for reading: "-" is stdin. A regular file
// (or stdin redirected from one) is returned as an *os.File; anything else
// as a asyncReader bounded by limit.
func openInput(ctx context.Context, path string, stdin io.Reader, limit int64) (io.ReadCloser, error) {
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
				r.buf, r.err = nil, fmt.Errorf("not a regular file and longer than %s (et reads no more than that from a pipe, FIFO or device)", fmtBytes(uint64(r.limit)))
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

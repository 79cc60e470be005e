package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/kernelmap"
)

// Shared input handling of the profile commands (report, export, diff):
// one way to open a trace and one way to find its kernel map.

// traceName is a trace argument as messages name it.
func traceName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

// openTrace opens a trace argument; "-" is stdin. A trace that cannot be
// opened is an input error (exit 2) naming the path. Reads see ctx: a
// signal ends them even when the trace is a FIFO or a pipe that blocks,
// which is read with a bound (infile.MaxTrace).
func openTrace(ctx context.Context, path string, stdin io.Reader) (io.Reader, func(), error) {
	rc, err := infile.Open(ctx, path, stdin, infile.MaxTrace)
	if err != nil {
		if strings.Contains(err.Error(), "is a directory") {
			return nil, nil, inputErrorf("open trace %s: is a directory (give the et_runtime_trace.json inside it)", path)
		}
		return nil, nil, inputErrorf("open trace %s: %v", path, infile.ErrText(err))
	}
	return &ctxCheckReader{ctx: ctx, r: rc}, func() { rc.Close() }, nil
}

// openTraceSeekable opens a trace for reading more than once; stdin and
// whatever else is not a regular file are spooled to a temporary file
// first. cleanup closes (and removes) it.
func openTraceSeekable(ctx context.Context, path string, stdin io.Reader) (io.ReadSeeker, func(), error) {
	if path != "-" && infile.IsRegular(path) {
		fh, err := os.Open(path)
		if err != nil {
			return nil, nil, inputErrorf("open trace %s: %v", path, infile.ErrText(err))
		}
		return fh, func() { fh.Close() }, nil
	}
	r, closeIn, err := openTrace(ctx, path, stdin)
	if err != nil {
		return nil, nil, err
	}
	defer closeIn()
	tmp, err := os.CreateTemp("", "et-trace-*.json")
	if err != nil {
		return nil, nil, ioErrorf("spool %s: %v", traceName(path), infile.ErrText(err))
	}
	cleanup := func() { tmp.Close(); os.Remove(tmp.Name()) }
	// A trace is a JSON object: what does not start as one (an endless
	// device, a binary file) is not spooled to the disk first.
	br := bufio.NewReader(r)
	for {
		c, err := br.ReadByte()
		if err != nil {
			break // empty or unreadable: the decoder says so
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		br.UnreadByte()
		if c != '{' {
			cleanup()
			return nil, nil, inputErrorf("parsing trace: %s: not a runtime trace: want '{', found byte 0x%02x", traceName(path), c)
		}
		break
	}
	if _, err := io.Copy(tmp, br); err != nil {
		cleanup()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, inputErrorf("read trace %s: %v", traceName(path), infile.ErrText(err))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, nil, ioErrorf("spool %s: %v", traceName(path), infile.ErrText(err))
	}
	return tmp, cleanup, nil
}

// ctxCheckReader stops a long read when the context is cancelled (^C).
type ctxCheckReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxCheckReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// besideMap is the kernel map beside a trace: kernel_id.json, or for a
// trace named et_runtime_trace<suffix> (et_runtime_trace.sample.json) the
// kernel_id<suffix> file when it exists.
func besideMap(trace string) string {
	dir, base := filepath.Dir(trace), filepath.Base(trace)
	if suffix, ok := strings.CutPrefix(base, "et_runtime_trace"); ok && suffix != ".json" {
		alt := filepath.Join(dir, "kernel_id"+suffix)
		if _, err := os.Stat(alt); err == nil {
			return alt
		}
	}
	return filepath.Join(dir, "kernel_id.json")
}

// kernelMapFor reads the kernel map of a trace: the file given by the
// --kernel-map flag, or else the one beside the trace. A flag naming a
// missing file is an input error (exit 2); no map beside the trace is not
// an error (kernels are then named kernel#<id>) and returns a nil map and
// a note for -v. A malformed map is an input error. The map's own
// warnings are returned prefixed with its path.
func kernelMapFor(ctx context.Context, trace, flag string) (m *kernelmap.Map, warns []string, note string, err error) {
	path := flag
	if path == "" {
		if trace == "-" {
			return nil, nil, "no kernel map for stdin (use --kernel-map); kernels are shown as kernel#<id>", nil
		}
		path = besideMap(trace)
	}
	b, err := infile.ReadFile(ctx, path, infile.MaxText)
	if err == nil {
		m, err = kernelmap.ReadNamed(bytes.NewReader(b), path)
	}
	if errors.Is(err, fs.ErrNotExist) && flag == "" {
		return nil, nil, fmt.Sprintf("no kernel map beside the trace (%s); kernels are shown as kernel#<id>", path), nil
	}
	if err != nil {
		var pe *kernelmap.ParseError
		if errors.As(err, &pe) {
			return nil, nil, "", err
		}
		return nil, nil, "", inputErrorf("read kernel map %s: %v", path, infile.ErrText(err))
	}
	for _, w := range m.Warnings {
		warns = append(warns, path+": "+w)
	}
	return m, warns, "", nil
}

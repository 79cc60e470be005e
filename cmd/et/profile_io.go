package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
// opened is an input error (exit 2) naming the path.
func openTrace(path string, stdin io.Reader) (io.Reader, func(), error) {
	if path == "-" {
		return stdin, func() {}, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, inputErrorf("open trace %s: %v", path, errText(err))
	}
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		fh.Close()
		return nil, nil, inputErrorf("open trace %s: is a directory (give the et_runtime_trace.json inside it)", path)
	}
	return fh, func() { fh.Close() }, nil
}

// openTraceSeekable opens a trace for reading more than once; stdin is
// spooled to a temporary file first. cleanup closes (and removes) it.
func openTraceSeekable(path string, stdin io.Reader) (io.ReadSeeker, func(), error) {
	if path != "-" {
		r, closeFn, err := openTrace(path, stdin)
		if err != nil {
			return nil, nil, err
		}
		return r.(io.ReadSeeker), closeFn, nil
	}
	tmp, err := os.CreateTemp("", "et-trace-*.json")
	if err != nil {
		return nil, nil, fmt.Errorf("spool stdin: %w", err)
	}
	cleanup := func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, stdin); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("read stdin: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("spool stdin: %w", err)
	}
	return tmp, cleanup, nil
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
func kernelMapFor(trace, flag string) (m *kernelmap.Map, warns []string, note string, err error) {
	path := flag
	if path == "" {
		if trace == "-" {
			return nil, nil, "no kernel map for stdin (use --kernel-map); kernels are shown as kernel#<id>", nil
		}
		path = besideMap(trace)
	}
	m, err = kernelmap.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && flag == "" {
		return nil, nil, fmt.Sprintf("no kernel map beside the trace (%s); kernels are shown as kernel#<id>", path), nil
	}
	if err != nil {
		var pe *kernelmap.ParseError
		if errors.As(err, &pe) {
			return nil, nil, "", err
		}
		return nil, nil, "", inputErrorf("read kernel map %s: %v", path, errText(err))
	}
	for _, w := range m.Warnings {
		warns = append(warns, path+": "+w)
	}
	return m, warns, "", nil
}

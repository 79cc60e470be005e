package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
)

// failWriter fails every write with err.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// Output that does not reach stdout is an I/O error (exit 5), in every
// format: table renderers drop write errors, executeRoot does not.
func TestStdoutWriteErrors(t *testing.T) {
	for _, errno := range []error{syscall.ENOSPC, syscall.EPIPE, syscall.EIO} {
		for _, format := range []string{"table", "json", "csv"} {
			t.Run(errno.Error()+"/"+format, func(t *testing.T) {
				var errOut strings.Builder
				f := newFactory(strings.NewReader(""), failWriter{errno}, &errOut)
				f.Getenv = func(string) string { return "" }
				code := execute(context.Background(), f, []string{"ops", "list", "-o", format})
				if code != exitInternal || !strings.Contains(errOut.String(), "et: write stdout: "+errno.Error()) {
					t.Errorf("exit %d, stderr %q; want exit 5 and the write error", code, errOut.String())
				}
			})
		}
	}
	// A usage error is still a usage error when stdout is gone.
	var errOut strings.Builder
	f := newFactory(strings.NewReader(""), failWriter{syscall.EPIPE}, &errOut)
	if code := execute(context.Background(), f, []string{"ops", "list", "-o", "xml"}); code != exitUsage {
		t.Errorf("bad -o with a broken stdout: exit %d", code)
	}
}

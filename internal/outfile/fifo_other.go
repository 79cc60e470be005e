//go:build !unix

package outfile

import (
	"context"
	"os"
)

// openFIFO opens a named pipe for writing. Off unix there are no FIFOs in
// the file system's sense; a plain open is what is left.
func openFIFO(_ context.Context, path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}

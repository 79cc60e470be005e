//go:build unix

package outfile

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// openFIFO opens a FIFO for writing. Without a reader an open blocks
// until one comes, where no signal can reach it: it is first tried
// without blocking, and else waited for on a goroutine, so that ctx ends
// the wait (the goroutine's open is then abandoned to the process's end).
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	fh, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		// Writes block again (a full pipe waits for the reader).
		if err := syscall.SetNonblock(int(fh.Fd()), false); err != nil {
			fh.Close()
			return nil, err
		}
		return fh, nil
	}
	if !errors.Is(err, syscall.ENXIO) {
		return nil, err // ENXIO: no reader yet
	}
	type opened struct {
		fh  *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		fh, err := os.OpenFile(path, os.O_WRONLY, 0)
		done <- opened{fh, err}
	}()
	select {
	case o := <-done:
		return o.fh, o.err
	case <-ctx.Done():
		go func() { // close what a late reader lets the open return
			if o := <-done; o.fh != nil {
				o.fh.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

package etrt

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// maxRead bounds one read request (the proxy sends chunkBytes at most),
// so a corrupt request cannot make the worker allocate without limit.
const maxRead = 256 << 20

// Serve answers the worker protocol: requests from r, responses to w. The
// first request must open a device, which open does; the others are
// driver.Device calls on it, each under the caller's deadline. Serve
// returns nil when the parent sends close or closes its end, and ctx's
// error when ctx is done (an interrupt forwarded by the parent). The
// device is closed before Serve returns.
//
// Requests are read on a goroutine of Serve's. When r has read deadlines
// (an *os.File in the runtime's poller: a pipe of os.Pipe, or a
// non-blocking descriptor), Serve ends that goroutine before it returns,
// even when the parent keeps its end open and sends nothing; on any
// other reader it ends when r does.
func Serve(ctx context.Context, r io.Reader, w io.Writer, open Opener) error {
	dec := gob.NewDecoder(newFrameReader(r))
	enc := gob.NewEncoder(w)
	var dev driver.Device
	defer func() {
		if dev != nil {
			dev.Close()
		}
	}()
	reqs := make(chan request)
	errc := make(chan error, 1)
	done := make(chan struct{})
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		for {
			var req request
			if err := dec.Decode(&req); err != nil {
				errc <- err
				return
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	defer func() {
		close(done)
		if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Unix(1, 0)) == nil {
			reader.Wait() // the blocked read fails now
		}
	}()
	for {
		var req request
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("worker protocol: read request: %w", err)
		case req = <-reqs:
		}
		resp, stop := handle(ctx, &dev, open, req)
		if err := enc.Encode(&resp); err != nil {
			return fmt.Errorf("worker protocol: write response: %w", err)
		}
		if stop {
			return nil
		}
	}
}

// handle runs one request. stop is set when the worker should exit: after
// close, or after a failed open.
func handle(ctx context.Context, dev *driver.Device, open Opener, req request) (resp response, stop bool) {
	if req.DeadlineUnixNano != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Unix(0, req.DeadlineUnixNano))
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			resp = response{Err: toWire(fmt.Errorf("%s: device panicked: %v", req.Op, p))}
		}
	}()
	fail := func(err error) (response, bool) { return response{Err: toWire(err)}, false }
	if req.Op == opOpen {
		if *dev != nil {
			return fail(errors.New("open: a device is already open"))
		}
		d, err := open(ctx, req.Open)
		if err != nil {
			return response{Err: toWire(err)}, true
		}
		*dev = d
		return response{Info: d.Info()}, false
	}
	d := *dev
	if d == nil {
		if req.Op == opClose {
			return response{}, true
		}
		return fail(fmt.Errorf("%s: no device open", req.Op))
	}
	switch req.Op {
	case opMalloc:
		p, err := d.Malloc(ctx, req.Size, req.Align)
		return response{Ptr: uint64(p), Err: toWire(err)}, false
	case opFree:
		return fail(d.Free(ctx, driver.DevPtr(req.Ptr)))
	case opWrite:
		return fail(d.Write(ctx, driver.DevPtr(req.Ptr), req.Data))
	case opRead:
		if req.Size > maxRead {
			return fail(fmt.Errorf("read: %d bytes is too large", req.Size))
		}
		buf := make([]byte, req.Size)
		if err := d.Read(ctx, driver.DevPtr(req.Ptr), buf); err != nil {
			return fail(err)
		}
		return response{Data: buf}, false
	case opLoad:
		k, err := d.LoadKernel(ctx, req.Name, req.Data)
		return response{Kernel: uint32(k), Err: toWire(err)}, false
	case opLaunch:
		return fail(d.Launch(ctx, driver.KernelID(req.Kernel), req.Data, req.Launch))
	case opSync:
		errs, err := d.Sync(ctx)
		return response{StreamErrors: errs, Err: toWire(err)}, false
	case opProfileStart, opProfileStop:
		pr, ok := d.(driver.Profiler)
		if !ok {
			return fail(fmt.Errorf("%s: the %s device has no runtime profiler", req.Op, d.Info().Kind))
		}
		if req.Op == opProfileStart {
			return fail(pr.StartProfile(ctx, req.Dir))
		}
		return fail(pr.StopProfile(ctx))
	case opClose:
		err := d.Close()
		*dev = nil
		return response{Err: toWire(err)}, true
	}
	return fail(fmt.Errorf("unknown operation %q", req.Op))
}

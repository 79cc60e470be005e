package etrt

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// closeTimeout bounds the polite close of a worker before it is killed.
const closeTimeout = 30 * time.Second

// Proxy is a driver.Device served by a worker (Serve) at the other end of
// a pipe pair. It is what OpenWorker returns; Dial builds one over any
// connection. After a timeout, an interrupt or the worker's death every
// call returns the same error.
type Proxy struct {
	mu     sync.Mutex
	enc    *gob.Encoder
	dec    *gob.Decoder
	conn   io.Closer
	proc   *process // nil when the server is not a child process
	info   driver.Info
	budget time.Duration // the device time of the session (WorkerOptions.Timeout); 0: none
	used   time.Duration // the time spent in calls so far
	dead   error         // set once the worker is gone or unusable
	failed bool          // a timeout, crash, failed open or stream error: keep the run directory
	closed bool

	runDir     string
	tempRunDir bool // created by OpenWorker: removed on a clean Close
}

var _ driver.Device = (*Proxy)(nil)

// Dial opens a device on the server at the other end of conn (reads are
// responses, writes are requests) and returns its proxy. When ctx is done
// during a call, conn is closed and the proxy becomes unusable.
func Dial(ctx context.Context, conn io.ReadWriteCloser, req OpenRequest) (*Proxy, error) {
	p := newProxy(conn, conn, conn)
	if err := p.open(ctx, req); err != nil {
		return nil, err
	}
	return p, nil
}

func newProxy(r io.Reader, w io.Writer, c io.Closer) *Proxy {
	return &Proxy{enc: gob.NewEncoder(w), dec: gob.NewDecoder(newFrameReader(r)), conn: c}
}

func (p *Proxy) open(ctx context.Context, req OpenRequest) error {
	resp, err := p.call(ctx, request{Op: opOpen, Open: req})
	if err != nil {
		p.shutdown()
		return err
	}
	p.info = resp.Info
	return nil
}

// Failed reports whether the session had a timeout, a crash, a failed
// open, a stream error or an interrupted call: its run directory is worth
// keeping.
func (p *Proxy) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// RunDir is the worker's run directory (UART logs, sysemu.log), or "".
func (p *Proxy) RunDir() string { return p.runDir }

// TempRunDir reports whether the run directory is a temporary one
// OpenWorker created: Close removes it after a clean session and keeps it
// when the session failed.
func (p *Proxy) TempRunDir() bool { return p.tempRunDir }

// Info returns the device's description, as the worker reported it at open.
func (p *Proxy) Info() driver.Info { return p.info }

// Malloc implements driver.Device; it is bounded by the session budget.
func (p *Proxy) Malloc(ctx context.Context, size, align uint64) (driver.DevPtr, error) {
	resp, err := p.call(ctx, request{Op: opMalloc, Size: size, Align: align})
	return driver.DevPtr(resp.Ptr), err
}

// Free implements driver.Device; it is bounded by the session budget.
func (p *Proxy) Free(ctx context.Context, ptr driver.DevPtr) error {
	_, err := p.call(ctx, request{Op: opFree, Ptr: uint64(ptr)})
	return err
}

// chunkBytes bounds the data of one request: gob refuses messages over
// 1 GiB, and smaller messages bound the worker's memory.
var chunkBytes = 64 << 20

// Write implements driver.Device. Large writes are sent in chunks.
func (p *Proxy) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	for off := 0; off < len(src) || off == 0; off += chunkBytes {
		end := min(off+chunkBytes, len(src))
		if _, err := p.call(ctx, request{Op: opWrite, Ptr: uint64(dst) + uint64(off), Data: src[off:end]}); err != nil {
			return err
		}
		if end == len(src) {
			break
		}
	}
	return nil
}

// Read implements driver.Device. Large reads are fetched in chunks.
func (p *Proxy) Read(ctx context.Context, src driver.DevPtr, dst []byte) error {
	for off := 0; off < len(dst) || off == 0; off += chunkBytes {
		end := min(off+chunkBytes, len(dst))
		resp, err := p.call(ctx, request{Op: opRead, Ptr: uint64(src) + uint64(off), Size: uint64(end - off)})
		if err != nil {
			return err
		}
		if len(resp.Data) != end-off {
			return fmt.Errorf("etrt worker: read returned %d bytes, want %d", len(resp.Data), end-off)
		}
		copy(dst[off:end], resp.Data)
		if end == len(dst) {
			break
		}
	}
	return nil
}

// LoadKernel implements driver.Device.
func (p *Proxy) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	resp, err := p.call(ctx, request{Op: opLoad, Name: name, Data: elf})
	return driver.KernelID(resp.Kernel), err
}

// Launch implements driver.Device.
func (p *Proxy) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	_, err := p.call(ctx, request{Op: opLaunch, Kernel: uint32(k), Data: args, Launch: opts})
	return err
}

// Sync implements driver.Device.
func (p *Proxy) Sync(ctx context.Context) ([]driver.StreamError, error) {
	resp, err := p.call(ctx, request{Op: opSync})
	if err == nil && len(resp.StreamErrors) > 0 {
		p.mu.Lock()
		p.failed = true
		p.mu.Unlock()
	}
	return resp.StreamErrors, err
}

// Close closes the device and stops the worker: politely (a close
// request, bounded by closeTimeout), then by killing its process group.
// It never leaves the worker behind. A run directory OpenWorker created is
// removed unless something failed.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	var err error
	if p.dead == nil {
		p.budget = 0 // closing is not part of the session's budget
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		_, err = p.callLocked(ctx, request{Op: opClose})
		cancel()
	}
	p.closed = true
	p.shutdown()
	if p.tempRunDir && !p.failed && p.runDir != "" {
		os.RemoveAll(p.runDir)
	}
	if p.dead != nil && errors.Is(err, p.dead) {
		err = nil // already reported by the call that failed
	}
	return err
}

// shutdown closes the connection and makes sure the worker is gone.
func (p *Proxy) shutdown() {
	if p.conn != nil {
		p.conn.Close()
	}
	if p.proc != nil {
		if !p.proc.waitFor(5 * time.Second) {
			p.proc.kill()
		}
		p.proc.killGroup() // grandchildren, if any
	}
}

type callResult struct {
	resp response
	err  error
}

func (p *Proxy) call(ctx context.Context, req request) (response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return response{}, fmt.Errorf("etrt worker: %s: %w", req.Op, errClosed)
	}
	return p.callLocked(ctx, req)
}

func (p *Proxy) callLocked(ctx context.Context, req request) (response, error) {
	if p.dead != nil {
		return response{}, p.dead
	}
	if p.budget > 0 {
		// Only time in calls counts against the budget.
		start := time.Now()
		defer func() { p.used += time.Since(start) }()
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(p.budget-p.used))
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		// Nothing was sent: the worker is idle and stays usable.
		if errors.Is(err, context.DeadlineExceeded) {
			return response{}, fmt.Errorf("etrt worker: %s: %w", req.Op, driver.ErrTimeout)
		}
		return response{}, &InterruptedError{Op: req.Op, Cause: err, Idle: true}
	}
	if dl, ok := ctx.Deadline(); ok {
		req.DeadlineUnixNano = dl.UnixNano()
	}
	ch := make(chan callResult, 1)
	go func() {
		if err := p.enc.Encode(&req); err != nil {
			ch <- callResult{err: err}
			return
		}
		var resp response
		err := p.dec.Decode(&resp)
		ch <- callResult{resp, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.failed = true
			p.dead = p.lost(req.Op, r.err)
			return response{}, p.dead
		}
		err := r.resp.Err.err()
		if err == nil {
			return r.resp, nil
		}
		if errors.Is(err, driver.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			// The worker's own wait gave up: the device state is unknown.
			p.failed = true
			p.dead = p.timedOut(req.Op, err)
			return response{}, p.dead
		}
		if req.Op == opOpen {
			p.failed = true
			p.dead = err
			err = p.withRunDir(err)
		}
		// Other errors (a bad address, an unknown kernel) leave the
		// device usable.
		return r.resp, err
	case <-ctx.Done():
		p.failed = true
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.dead = p.timedOut(req.Op, nil)
		} else {
			p.dead = p.interrupted(req.Op, ctx.Err())
		}
		return response{}, p.dead
	}
}

// withRunDir names the kept run directory in an error.
func (p *Proxy) withRunDir(err error) error {
	if p.runDir == "" {
		return err
	}
	return fmt.Errorf("%w (logs in %s)", err, p.runDir)
}

// timedOut kills the worker and describes the timeout.
func (p *Proxy) timedOut(op string, cause error) error {
	if p.proc != nil {
		p.proc.kill()
	} else if p.conn != nil {
		p.conn.Close()
	}
	e := &TimeoutError{Op: op, RunDir: p.runDir, Tails: Tails(p.runDir)}
	if cause != nil {
		e.Detail = cause.Error()
	}
	return e
}

// interrupted forwards an interrupt to the worker, gives it a moment to
// clean up, then kills it.
func (p *Proxy) interrupted(op string, cause error) error {
	if p.proc != nil {
		p.proc.interrupt(3 * time.Second)
	} else if p.conn != nil {
		p.conn.Close()
	}
	return &InterruptedError{Op: op, Cause: cause}
}

// InterruptedError is a call cut short by the caller's context (Ctrl-C):
// the worker was stopped. It wraps the context's error.
type InterruptedError struct {
	Op    string
	Cause error
	// Idle: the context was done before the call was sent; the worker
	// was left as it was.
	Idle bool
}

func (e *InterruptedError) Error() string {
	if e.Idle {
		return fmt.Sprintf("etrt worker: interrupted before %s", e.Op)
	}
	return fmt.Sprintf("etrt worker: interrupted during %s; worker stopped", e.Op)
}

func (e *InterruptedError) Unwrap() error { return e.Cause }

// lost describes the worker's death (or a broken pipe).
func (p *Proxy) lost(op string, cause error) error {
	e := &WorkerError{Op: op, RunDir: p.runDir}
	if p.proc == nil {
		e.Status = "connection lost: " + cause.Error()
		return e
	}
	if !p.proc.waitFor(5 * time.Second) {
		p.proc.kill()
	}
	e.Status = p.proc.status()
	e.Stderr = p.proc.out.String()
	e.Output, e.Reason, e.Signal = crashReason(e.Stderr)
	e.Tails = Tails(p.runDir)
	return e
}

// TimeoutError is a call that did not finish in time: the worker was
// killed. It wraps driver.ErrTimeout (exit 4).
type TimeoutError struct {
	// Op is the call that timed out ("open" is the emulator boot).
	Op string
	// Detail is the worker's own timeout message, if it gave up first.
	Detail string
	// RunDir is the kept run directory, or "".
	RunDir string
	// Tails are the last lines of sysemu.log and the UART logs.
	Tails []LogTail
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "etrt worker timed out during %s; worker killed", e.Op)
	if e.Detail != "" {
		fmt.Fprintf(&b, " (%s)", e.Detail)
	}
	writeLogs(&b, e.RunDir, e.Tails)
	return b.String()
}

// Unwrap makes the error a driver.ErrTimeout.
func (e *TimeoutError) Unwrap() error { return driver.ErrTimeout }

// WorkerError is the worker's unexpected death (a crash in the runtime, an
// emulator abort): the call's result is unknown.
//
// A fatal signal in native code (the runtime's or the emulator's abort())
// makes the Go runtime print a crash dump after whatever the worker
// printed; its last line is a register, so the error names instead the
// worker's own last message (Reason) and the dump's first line (Signal).
type WorkerError struct {
	Op string
	// Status is how the worker ended ("signal: aborted", "exit status 2").
	Status string
	// Reason is the last message the worker printed before it died: the
	// shim's, the runtime's or the emulator's ("fake shim: scripted crash
	// in kernelLaunch", a C++ exception's what(), a FATAL or failed check
	// line), or "".
	Reason string
	// Signal is the first line of the Go runtime's crash dump ("SIGABRT:
	// abort", "fatal error: ...", "panic: ..."), or "" without one.
	Signal string
	// Output is the tail of the worker's output before the crash dump.
	Output string
	// Stderr is the tail of the worker's whole output, crash dump
	// included (worker.log in the run directory has all of it).
	Stderr string
	RunDir string
	Tails  []LogTail
}

func (e *WorkerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "etrt worker died during %s (%s)", e.Op, e.Status)
	var what []string
	for _, s := range []string{e.Reason, e.Signal} {
		if s != "" {
			what = append(what, s)
		}
	}
	if len(what) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(what, "; "))
	}
	writeLogs(&b, e.RunDir, e.Tails)
	return b.String()
}

func writeLogs(b *strings.Builder, runDir string, tails []LogTail) {
	if runDir != "" {
		fmt.Fprintf(b, "; logs in %s", runDir)
	}
	for _, t := range tails {
		if len(t.Lines) > 0 {
			fmt.Fprintf(b, "; %s: %s", t.Name, t.Lines[len(t.Lines)-1])
		}
	}
}

package etrt

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// FuzzServe feeds arbitrary bytes to the worker's request decoder: Serve
// must return (an error or nil), never panic.
//
// A gob stream starts with its type definitions (about 1 KiB for request):
// as a seed that size starves the fuzzer, whose minimiser runs for minutes
// on every new input of that size. So unless raw is set, the input is
// appended to a fixed preamble (the type definitions and an open request)
// and the seeds are single value messages of a few bytes.
func FuzzServe(f *testing.F) {
	var stream bytes.Buffer
	enc := gob.NewEncoder(&stream)
	enc.Encode(&request{Op: opOpen, Open: OpenRequest{Backend: "fake"}})
	preamble := append([]byte(nil), stream.Bytes()...)
	for _, r := range []request{
		{Op: opMalloc, Size: 128, Align: 64},
		{Op: opWrite, Ptr: fakeBase, Data: []byte{1, 2, 3}},
		{Op: opRead, Ptr: fakeBase, Size: 3},
		{Op: opLoad, Name: "k"},
		{Op: opLaunch, Kernel: 0, Data: []byte{9}, Launch: driver.LaunchOptions{ShireMask: 1}},
		{Op: opSync},
		{Op: "bogus"},
		{Op: opClose},
	} {
		n := stream.Len()
		enc.Encode(&r)
		f.Add(false, append([]byte(nil), stream.Bytes()[n:]...))
	}
	f.Add(true, []byte{})
	f.Add(true, []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(true, preamble[:16])
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		// A few messages reach every request; long inputs only feed the
		// minimiser, whose cost grows with the square of their length.
		if len(data) > 64 {
			return
		}
		if !raw {
			data = append(append([]byte(nil), preamble...), data...)
		}
		serveOnce(data)
	})
}

// TestServeWholeStream runs FuzzServe's body on a whole session.
func TestServeWholeStream(t *testing.T) {
	var stream bytes.Buffer
	enc := gob.NewEncoder(&stream)
	for _, r := range []request{{Op: opOpen, Open: OpenRequest{Backend: "fake"}}, {Op: opMalloc, Size: 128, Align: 64}, {Op: opSync}, {Op: opClose}} {
		enc.Encode(&r)
	}
	serveOnce(stream.Bytes())
}

func serveOnce(data []byte) {
	if !gobLengthsFit(data) {
		// A message length past the input makes gob allocate it
		// first (up to 1 GiB): seconds per input, which starves the
		// fuzzer. The worker's parent never sends such lengths.
		return
	}
	open := func(ctx context.Context, req OpenRequest) (driver.Device, error) {
		return &fakeDevice{faults: map[string]bool{}, next: fakeBase, mem: map[uint64][]byte{}}, nil
	}
	// Serve's reader goroutine ends with the context: cancel it, or
	// every input that stops early (close, failed open) leaks one.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	Serve(ctx, bytes.NewReader(data), io.Discard, open)
}

// gobLengthsFit tells whether every message length prefix of a gob
// stream (an unsigned gob integer: one byte below 0x80, else the negated
// count of big-endian bytes that follow) fits in what remains of data.
func gobLengthsFit(data []byte) bool {
	for len(data) > 0 {
		n, rest, ok := gobUint(data)
		if !ok || n > uint64(len(rest)) {
			return n <= 1<<16 && ok // short lengths are cheap to try
		}
		data = rest[n:]
	}
	return true
}

func gobUint(b []byte) (uint64, []byte, bool) {
	if b[0] < 0x80 {
		return uint64(b[0]), b[1:], true
	}
	k := -int(int8(b[0]))
	if k > 8 || len(b) < 1+k {
		return 0, nil, false
	}
	var n uint64
	for _, c := range b[1 : 1+k] {
		n = n<<8 | uint64(c)
	}
	return n, b[1+k:], true
}

// Serve ends its reader goroutine before it returns when its pipe has
// read deadlines, even though the parent keeps the pipe open and sends
// nothing after close.
func TestServeEndsItsReader(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	// Both requests fit in the pipe's buffer: written before Serve runs.
	enc := gob.NewEncoder(pw)
	for _, r := range []request{{Op: opOpen, Open: OpenRequest{Backend: "fake"}}, {Op: opClose}} {
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	open := func(ctx context.Context, req OpenRequest) (driver.Device, error) {
		return &fakeDevice{faults: map[string]bool{}, next: fakeBase, mem: map[uint64][]byte{}}, nil
	}
	before := runtime.NumGoroutine()
	if err := Serve(context.Background(), pr, io.Discard, open); err != nil {
		t.Fatal(err)
	}
	// The reader has returned when Serve does; give it up to 5 s to be
	// retired (a blocked reader never is).
	for i := 0; i < 5000 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after Serve, %d before it: its reader is still blocked\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

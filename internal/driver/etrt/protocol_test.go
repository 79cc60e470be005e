package etrt

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
)

// pipeConn is the client end of an in-process server.
type pipeConn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (c pipeConn) Close() error {
	for _, cl := range c.closers {
		cl.Close()
	}
	return nil
}

// serveInProcess runs Serve over io.Pipes with the fake device and
// returns the client end and the server's result.
func serveInProcess(t *testing.T, faults string) (pipeConn, <-chan error) {
	t.Helper()
	t.Chdir(t.TempDir()) // the fake device writes its logs in the current directory
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), reqR, respW, func(ctx context.Context, req OpenRequest) (driver.Device, error) {
			if req.Backend != "fake" {
				return nil, errors.New("unknown backend " + req.Backend)
			}
			return openFakeDevice(faults)
		})
		respW.Close()
		reqR.Close()
		done <- err
	}()
	return pipeConn{Reader: respR, Writer: reqW, closers: []io.Closer{reqW, respR}}, done
}

// exercise runs a device through every call and checks the results.
func exercise(t *testing.T, dev driver.Device) {
	t.Helper()
	ctx := context.Background()
	p, err := dev.Malloc(context.Background(), 256, 64)
	if err != nil {
		t.Fatalf("Malloc: %v", err)
	}
	if p%64 != 0 || p == 0 {
		t.Errorf("Malloc = %#x, want a non-zero 64-byte aligned address", p)
	}
	want := []byte("the quick brown fox jumps over the lazy dog")
	if err := dev.Write(ctx, p+64, want); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got := make([]byte, len(want))
	if err := dev.Read(ctx, p+64, got); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Read = %q, want %q", got, want)
	}
	if err := dev.Read(ctx, p+250, make([]byte, 16)); err == nil {
		t.Error("Read past the allocation: no error")
	}
	k, err := dev.LoadKernel(ctx, "el_map_f32", sysemuKernelELF())
	if err != nil {
		t.Fatalf("LoadKernel: %v", err)
	}
	if err := dev.Launch(ctx, k, make([]byte, 1008), driver.LaunchOptions{ShireMask: 0x1, Barrier: true}); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if errs, err := dev.Sync(ctx); err != nil || len(errs) != 0 {
		t.Fatalf("Sync = %v, %v; want no errors", errs, err)
	}
	if err := dev.Free(context.Background(), p); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if err := dev.Free(context.Background(), p); err == nil {
		t.Error("double Free: no error")
	}
}

// sysemuKernelELF is enough of an ELF for the fake shim's magic check.
func sysemuKernelELF() []byte { return append([]byte("\x7fELF"), make([]byte, 60)...) }

func TestProxyInProcess(t *testing.T) {
	conn, done := serveInProcess(t, "")
	dev, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if got := dev.Info(); got.Name != "fake0" || got.Props != driver.FakeProps() {
		t.Errorf("Info = %+v", got)
	}
	exercise(t, dev)
	if err := dev.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil after close", err)
	}
	if _, err := dev.Malloc(context.Background(), 64, 64); err == nil || !errors.Is(err, errClosed) {
		t.Errorf("Malloc after Close = %v, want %v", err, errClosed)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestProxyErrors(t *testing.T) {
	conn, _ := serveInProcess(t, "stream_error")
	dev, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ctx := context.Background()

	_, err = dev.LoadKernel(ctx, "", nil)
	var ie interface{ InputError() }
	if !errors.As(err, &ie) {
		t.Errorf("LoadKernel(\"\") = %v, want an input error", err)
	}
	k, err := dev.LoadKernel(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := dev.Launch(ctx, k, nil, driver.LaunchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	errs, err := dev.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 2 || errs[0].Code != "KernelLaunchException" || len(errs[0].Contexts) != 1 ||
		errs[0].Contexts[0] != (driver.ErrorContext{Hart: 3, Cause: 5, EPC: 0x8005b39010, TVal: 0xdead0000, Detail: "U-mode exception: load access fault"}) {
		t.Errorf("Sync = %+v", errs)
	}
	if err := dev.Launch(ctx, 99, nil, driver.LaunchOptions{}); err == nil || !strings.Contains(err.Error(), "unknown kernel 99") {
		t.Errorf("Launch(99) = %v", err)
	}
	// An ordinary error leaves the device usable.
	if _, err := dev.Malloc(context.Background(), 64, 0); err != nil {
		t.Errorf("Malloc after an error: %v", err)
	}
}

func TestProxyOpenFails(t *testing.T) {
	conn, done := serveInProcess(t, "open_fail")
	_, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
	if !errors.Is(err, driver.ErrNoDevice) || !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("Dial = %v, want ErrNoDevice", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil after a failed open", err)
	}
}

func TestProxyDeadlineAndCancel(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		is   error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, driver.ErrTimeout},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, _ := serveInProcess(t, "hang_sync") // the server goroutine stays hung
			dev, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err = dev.Sync(ctx)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Sync = %v, want %v", err, tt.is)
			}
			// The proxy is now unusable, with the same error.
			if _, err2 := dev.Malloc(context.Background(), 64, 64); err2 != err {
				t.Errorf("Malloc after %s = %v, want %v", tt.name, err2, err)
			}
		})
	}
}

// A Malloc that hangs in the worker ends with its context (an
// interrupt), and a Free with a done context sends nothing: they took
// context.Background() and ignored the first Ctrl-C (issue 33).
func TestProxyMallocFreeHonourContext(t *testing.T) {
	dev, ctx := dialFake(t, "hang_malloc")
	if err := dev.Free(ctx, 0x8000); !errors.Is(err, context.Canceled) {
		t.Errorf("Free = %v, want context.Canceled", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := dev.Malloc(ctx, 64, 64)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Malloc = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Minute): // a hang guard, not a latency bound
		t.Fatal("a canceled Malloc never returned")
	}
}

// dialFake is a proxy of an in-process fake device with faults, and a
// context already canceled.
func dialFake(t *testing.T, faults string) (*Proxy, context.Context) {
	t.Helper()
	conn, _ := serveInProcess(t, faults)
	dev, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return dev, ctx
}

func TestProxyDoneContextSendsNothing(t *testing.T) {
	dev, ctx := dialFake(t, "")
	if err := dev.Write(ctx, 0x8000, []byte{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	// Nothing was sent, so the worker is still usable.
	if _, err := dev.Malloc(context.Background(), 64, 64); err != nil {
		t.Errorf("Malloc after a cancelled call: %v", err)
	}
}

func TestServeRejectsCallsBeforeOpen(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go Serve(context.Background(), reqR, respW, nil)
	p := newProxy(respR, reqW, pipeConn{closers: []io.Closer{reqW, respR}})
	_, err := p.Malloc(context.Background(), 64, 64)
	if err == nil || !strings.Contains(err.Error(), "no device open") {
		t.Errorf("Malloc before open = %v", err)
	}
	p.Close()
}

func TestTails(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	for i := 0; i < 5000; i++ {
		long.WriteString("line ")
		long.WriteString(strings.Repeat("x", i%7))
		long.WriteString("\n")
	}
	long.WriteString("FATAL Error loading ELF \"/opt/et/lib/esperanto-fw/MasterMinion/MasterMinion.elf\"\n\n")
	writeTestFile(t, dir+"/sysemu.log", long.String())
	writeTestFile(t, dir+"/spio_uart0_tx.log", "MAIN:[txt]Configure NOC\r\nMAIN:[txt]MemShire Configure\r\n")
	writeTestFile(t, dir+"/pu_uart0_tx.log", "")
	got := Tails(dir)
	if len(got) != 2 || got[0].Name != "sysemu.log" || got[1].Name != "spio_uart0_tx.log" {
		t.Fatalf("Tails = %+v", got)
	}
	if n := len(got[0].Lines); n != TailLines {
		t.Errorf("%d sysemu.log lines, want %d", n, TailLines)
	}
	if last := got[0].Lines[len(got[0].Lines)-1]; !strings.HasPrefix(last, "FATAL Error loading ELF") {
		t.Errorf("last sysemu.log line = %q", last)
	}
	if want := []string{"MAIN:[txt]Configure NOC", "MAIN:[txt]MemShire Configure"}; strings.Join(got[1].Lines, "|") != strings.Join(want, "|") {
		t.Errorf("UART lines = %q, want %q", got[1].Lines, want)
	}
	if Tails("") != nil || Tails(dir+"/missing") != nil {
		t.Error("Tails of no directory should be nil")
	}
}

func TestProxyChunks(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 100
	conn, _ := serveInProcess(t, "")
	dev, err := Dial(context.Background(), conn, OpenRequest{Backend: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ctx := context.Background()
	p, err := dev.Malloc(context.Background(), 4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 99, 100, 101, 1000, 4000} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*31 + n)
		}
		if err := dev.Write(ctx, p+7, want); err != nil {
			t.Fatalf("Write(%d): %v", n, err)
		}
		got := make([]byte, n)
		if err := dev.Read(ctx, p+7, got); err != nil {
			t.Fatalf("Read(%d): %v", n, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read back differs", n)
		}
	}
}

// A message whose length prefix announces more than the protocol ever
// sends fails at once, before anything is allocated for it; a stream of
// real messages passes through the frame reader unchanged.
func TestFrameReaderBounds(t *testing.T) {
	var stream bytes.Buffer
	enc := gob.NewEncoder(&stream)
	for _, r := range []request{{Op: opOpen, Open: OpenRequest{Backend: "fake"}}, {Op: opWrite, Data: make([]byte, 70000)}, {Op: opClose}} {
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := io.ReadAll(newFrameReader(bytes.NewReader(stream.Bytes())))
	if err != nil || !bytes.Equal(got, stream.Bytes()) {
		t.Fatalf("pass-through: %d of %d bytes, %v", len(got), stream.Len(), err)
	}
	// 0xfc = 4 count bytes: 0x3fffffff, just under gob's own 1 GiB limit.
	_, err = io.ReadAll(newFrameReader(bytes.NewReader([]byte{0xfc, 0x3f, 0xff, 0xff, 0xff, 0})))
	if err == nil || !strings.Contains(err.Error(), "over the protocol's") {
		t.Errorf("huge count: %v", err)
	}
	_, err = io.ReadAll(newFrameReader(bytes.NewReader([]byte{0xf0})))
	if err == nil || !strings.Contains(err.Error(), "bad length byte") {
		t.Errorf("bad length byte: %v", err)
	}
	_, err = io.ReadAll(newFrameReader(bytes.NewReader([]byte{5, 1, 2})))
	if err != io.ErrUnexpectedEOF {
		t.Errorf("truncated message: %v", err)
	}
}

package profile

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// xs reads n bytes of 'x'.
type xs struct{ n int }

func (r *xs) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// traceWithString is a trace of one event whose thread_id is n bytes.
func traceWithString(n int) io.Reader {
	return io.MultiReader(strings.NewReader(`{"value0": {"type": "Instant", "class": "StartProfiling", "timeStamp": {"time_since_epoch": {"count": 1}}, "thread_id": "`),
		&xs{n}, strings.NewReader(`"}}`))
}

// A string in a trace is cut to MaxValue bytes, and a value kept whole
// over MaxValue is an input error: a trace with one 100 MB string cost
// 657 MB of memory; now it is read in a few MiB.
func TestDecodeMaxValue(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	_, err := Decode(traceWithString(100e6), Options{File: "t.json"}, func(Event) error { n++; return nil })
	runtime.ReadMemStats(&after)
	if err != nil || n != 1 {
		t.Errorf("a 100 MB string: %d events, %v", n, err)
	}
	// Holding the string took 128 MiB and more.
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("decoding it allocated %d bytes, want at most 32 MiB", got)
	}
	// An escaped string is cut too.
	esc := io.MultiReader(strings.NewReader(`{"value0": {"type": "Instant", "class": "`),
		strings.NewReader(strings.Repeat(`\n`, MaxValue)), strings.NewReader(`", "timeStamp": {"time_since_epoch": {"count": 1}}}}`))
	if _, err := Decode(esc, Options{}, func(Event) error { return nil }); err != nil {
		t.Errorf("a 2 MiB escaped string: %v", err)
	}
	data := io.MultiReader(strings.NewReader(`{"value0": {"type": "Instant", "class": "StartProfiling", "timeStamp": {"time_since_epoch": {"count": 1}}, "extra": [{"key": "k", "value": {"index": 0, "data": "`),
		&xs{2 * MaxValue}, strings.NewReader(`"}}]}}`))
	_, err = Decode(data, Options{File: "t.json"}, func(Event) error { return nil })
	var se *SyntaxError
	if !errors.As(err, &se) || se.Event != 0 || !strings.Contains(err.Error(), "a value longer than 1 MiB") {
		t.Errorf("an extra's data of 2 MiB: %v, want a *SyntaxError of event 0", err)
	}
}

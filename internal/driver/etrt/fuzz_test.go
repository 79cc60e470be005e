package etrt

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// FuzzServe feeds arbitrary bytes to the worker's request decoder: Serve
// must return (an error or nil), never panic.
func FuzzServe(f *testing.F) {
	var seed bytes.Buffer
	enc := gob.NewEncoder(&seed)
	for _, r := range []request{
		{Op: opOpen, Open: OpenRequest{Backend: "fake"}},
		{Op: opMalloc, Size: 128, Align: 64},
		{Op: opWrite, Ptr: fakeBase, Data: []byte{1, 2, 3}},
		{Op: opRead, Ptr: fakeBase, Size: 3},
		{Op: opLoad, Name: "k"},
		{Op: opLaunch, Kernel: 0, Data: []byte{9}, Launch: driver.LaunchOptions{ShireMask: 1}},
		{Op: opSync},
		{Op: "bogus"},
		{Op: opClose},
	} {
		enc.Encode(&r)
	}
	f.Add(seed.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		open := func(ctx context.Context, req OpenRequest) (driver.Device, error) {
			return &fakeDevice{faults: map[string]bool{}, next: fakeBase, mem: map[uint64][]byte{}}, nil
		}
		Serve(context.Background(), bytes.NewReader(data), io.Discard, open)
	})
}

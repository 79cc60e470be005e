package ref

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ainekko/et/internal/ops/refmath"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// env is a reference device with helpers to move host tensors in and out.
type env struct {
	t   testing.TB
	d   *Device
	m   *abi.Manifest
	ctx context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	d := New(Options{})
	t.Cleanup(func() { d.Close() })
	return &env{t: t, d: d, m: abi.Default(), ctx: context.Background()}
}

// upload allocates a device buffer for x's whole host buffer (x may be a
// view: the buffer is its base's) and writes it; it returns the device
// address of x's element 0.
func (e *env) upload(x *ops.Tensor) uint64 {
	e.t.Helper()
	n := uint64(len(x.Buf))
	p, err := e.d.Malloc(context.Background(), max(n, 1), 64)
	if err != nil {
		e.t.Fatalf("malloc %d: %v", n, err)
	}
	if err := e.d.Write(e.ctx, p, x.Buf); err != nil {
		e.t.Fatalf("write: %v", err)
	}
	return uint64(p) + x.Offs
}

// desc is the device tensor of host tensor x whose element 0 is at data.
func (e *env) desc(x *ops.Tensor, data uint64, op ops.Op) abi.TensorDesc {
	e.t.Helper()
	var v int32
	if op != "" {
		var ok bool
		if v, ok = e.m.OpValue(string(op)); !ok {
			e.t.Fatalf("op %s has no ggml value", op)
		}
	}
	return abi.DescFromTensor(x, data, v, [abi.NumOpParams]int32{})
}

// download returns a copy of x whose buffer is read from the device
// buffer that holds x's element 0 at data.
func (e *env) download(x *ops.Tensor, data uint64) *ops.Tensor {
	e.t.Helper()
	y := *x
	y.Buf = make([]byte, len(x.Buf))
	if err := e.d.Read(e.ctx, driver.DevPtr(data-x.Offs), y.Buf); err != nil {
		e.t.Fatalf("read: %v", err)
	}
	return &y
}

// encode encodes v as kernel's params struct.
func (e *env) encode(kernel string, v abi.Values) []byte {
	e.t.Helper()
	l, ok := e.m.LayoutFor(kernel)
	if !ok {
		e.t.Fatalf("kernel %s has no layout", kernel)
	}
	b, err := e.m.Encode(l, v)
	if err != nil {
		e.t.Fatalf("encode %s: %v", kernel, err)
	}
	return b
}

// launch loads kernel, launches it on args and syncs; it returns the
// stream errors.
func (e *env) launch(kernel string, args []byte) []driver.StreamError {
	e.t.Helper()
	id, err := e.d.LoadKernel(e.ctx, kernel, nil)
	if err != nil {
		e.t.Fatalf("load %s: %v", kernel, err)
	}
	if err := e.d.Launch(e.ctx, id, args, driver.LaunchOptions{ShireMask: 0xFFFFFFFF, Barrier: true}); err != nil {
		e.t.Fatalf("launch %s: %v", kernel, err)
	}
	serrs, err := e.d.Sync(e.ctx)
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return serrs
}

// mustLaunch is launch that fails the test on a stream error.
func (e *env) mustLaunch(kernel string, args []byte) {
	e.t.Helper()
	if serrs := e.launch(kernel, args); len(serrs) > 0 {
		e.t.Fatalf("%s: stream errors: %v", kernel, serrs)
	}
}

// wantFault launches and checks that exactly one stream error with code
// comes back.
func (e *env) wantFault(kernel string, args []byte, code string) driver.StreamError {
	e.t.Helper()
	serrs := e.launch(kernel, args)
	if len(serrs) != 1 {
		e.t.Fatalf("%s: got %d stream errors %v, want 1 with code %s", kernel, len(serrs), serrs, code)
	}
	if serrs[0].Code != code {
		e.t.Fatalf("%s: stream error %v, want code %s", kernel, serrs[0], code)
	}
	return serrs[0]
}

// refOut computes op on the host with the reference math.
func refOut(t *testing.T, op ops.Op, srcs []*ops.Tensor, raw map[string]any) *ops.Tensor {
	t.Helper()
	info, ok := ops.Lookup(string(op))
	if !ok {
		t.Fatalf("unknown op %s", op)
	}
	p, err := info.Normalize(raw)
	if err != nil {
		t.Fatalf("normalize %s: %v", op, err)
	}
	out, err := refmath.Compute(info, srcs, p)
	if err != nil {
		t.Fatalf("reference %s: %v", op, err)
	}
	return out
}

// sameBits fails unless got and want hold the same bytes for every
// element.
func sameBits(t *testing.T, got, want *ops.Tensor) {
	t.Helper()
	if got.Type != want.Type || got.Ne != want.Ne {
		t.Fatalf("got %s %s, want %s %s", got.Type, got.ShapeString(), want.Type, want.ShapeString())
	}
	g, w := ops.Cont(got), ops.Cont(want)
	if !bytes.Equal(g.Buf, w.Buf) {
		gf, wf := g.ToF32(), w.ToF32()
		for i := range gf {
			if gf[i] != wf[i] {
				t.Fatalf("element %d: got %v, want %v (of %d)", i, gf[i], wf[i], len(gf))
			}
		}
		t.Fatalf("bytes differ")
	}
}

// differs reports whether got and want differ in at least one byte.
func differs(got, want *ops.Tensor) bool {
	return !bytes.Equal(ops.Cont(got).Buf, ops.Cont(want).Buf)
}

func randF32(r *rand.Rand, n int64, lo, hi float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = lo + (hi-lo)*r.Float32()
	}
	return out
}

func randTensor(r *rand.Rand, typ ops.Type, ne ...int64) *ops.Tensor {
	n := int64(1)
	for _, x := range ne {
		n *= x
	}
	return ops.FromF32(typ, ne, randF32(r, n, -1, 1))
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

package ref

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// replayOf is the replay the device keeps for kernel on args (nil: none).
func (e *env) replayOf(kernel string, args []byte) *replay {
	if c := e.d.params.lookup(kernel, args); c != nil {
		return c.replay
	}
	return nil
}

// addLaunch uploads a and b, allocates a dst and encodes el_map_f32 ADD
// on them; it returns the params and dst's address.
func (e *env) addLaunch(a, b *ops.Tensor) ([]byte, uint64) {
	var v abi.Values
	v.SetTensor("src0", e.desc(a, e.upload(a), ""))
	v.SetTensor("src1", e.desc(b, e.upload(b), ""))
	dst := ops.New(ops.F32, a.Ne[:]...)
	at := e.upload(dst)
	v.SetTensor("dst", e.desc(dst, at, ops.OpAdd))
	return e.encode("el_map_f32", v), at
}

// A launch of the same params bytes replays the resolved launch: it
// reads the sources as they are now, and records its decoded params for
// the ABI check like any launch.
func TestReplayReadsCurrentMemory(t *testing.T) {
	e := newEnv(t)
	r := newRand(5)
	a, b := randTensor(r, ops.F32, 64, 3), randTensor(r, ops.F32, 64, 3)
	args, at := e.addLaunch(a, b)
	e.mustLaunch("el_map_f32", args)
	if e.replayOf("el_map_f32", args) == nil {
		t.Fatal("no replay kept for el_map_f32 after its first launch")
	}
	sameBits(t, e.download(ops.New(ops.F32, 64, 3), at), refOut(t, ops.OpAdd, []*ops.Tensor{a, b}, nil))
	e.d.TakeDecoded()

	// New contents of src0, same bytes: the replay computes on them.
	a2 := randTensor(r, ops.F32, 64, 3)
	var v abi.Values
	if err := decodeInto(e, args, &v); err != nil {
		t.Fatal(err)
	}
	src0, _ := v.Tensor("src0")
	if err := e.d.Write(e.ctx, driver.DevPtr(src0.Data), a2.Buf); err != nil {
		t.Fatal(err)
	}
	e.mustLaunch("el_map_f32", args)
	sameBits(t, e.download(ops.New(ops.F32, 64, 3), at), refOut(t, ops.OpAdd, []*ops.Tensor{a2, b}, nil))

	dec := e.d.TakeDecoded()
	if len(dec) != 1 || dec[0].Kernel != "el_map_f32" {
		t.Fatalf("a replayed launch recorded %d decoded params %v, want 1 of el_map_f32", len(dec), dec)
	}
	l, _ := e.m.LayoutFor("el_map_f32")
	if diffs := abi.Diff(l, v, dec[0].Values); len(diffs) > 0 {
		t.Errorf("a replayed launch recorded params that differ from its bytes: %v", diffs)
	}
}

// A replayed launch takes the simulated time of the launch it replays.
func TestReplayKeepsCycles(t *testing.T) {
	e := newEnv(t)
	r := newRand(6)
	args, _ := e.addLaunch(randTensor(r, ops.F32, 64, 3), randTensor(r, ops.F32, 64, 3))
	for range 3 {
		e.mustLaunch("el_map_f32", args)
	}
	l := e.d.Launches()
	if len(l) != 3 {
		t.Fatalf("%d launch records, want 3", len(l))
	}
	d := l[0].EndCycle - l[0].StartCycle
	if d <= LaunchOverheadCycles {
		t.Fatalf("the first launch took %d cycles, no more than the launch overhead", d)
	}
	for i, rec := range l[1:] {
		if rec.StartCycle != l[i].EndCycle || rec.EndCycle-rec.StartCycle != d {
			t.Errorf("replayed launch %d: cycles %d..%d, want %d..%d", i+1, rec.StartCycle, rec.EndCycle, l[i].EndCycle, l[i].EndCycle+d)
		}
	}
}

func decodeInto(e *env, args []byte, v *abi.Values) error {
	l, _ := e.m.LayoutFor("el_map_f32")
	d, err := e.m.Decode(l, args)
	*v = d
	return err
}

// A launch with other params bytes (another dst buffer) does not reuse
// the replay of the first: each writes its own dst, and the ABI check
// sees each launch's own params.
func TestReplayKeyedByParams(t *testing.T) {
	e := newEnv(t)
	r := newRand(6)
	a, b := randTensor(r, ops.F32, 32, 2), randTensor(r, ops.F32, 32, 2)
	c, d := randTensor(r, ops.F32, 32, 2), randTensor(r, ops.F32, 32, 2)
	args1, at1 := e.addLaunch(a, b)
	args2, at2 := e.addLaunch(c, d)
	for range 2 {
		e.mustLaunch("el_map_f32", args1)
		e.mustLaunch("el_map_f32", args2)
	}
	sameBits(t, e.download(ops.New(ops.F32, 32, 2), at1), refOut(t, ops.OpAdd, []*ops.Tensor{a, b}, nil))
	sameBits(t, e.download(ops.New(ops.F32, 32, 2), at2), refOut(t, ops.OpAdd, []*ops.Tensor{c, d}, nil))
	dec := e.d.TakeDecoded()
	if len(dec) != 4 {
		t.Fatalf("%d decoded params for 4 launches", len(dec))
	}
	for i, want := range []uint64{at1, at2, at1, at2} {
		if dst, _ := dec[i].Values.Tensor("dst"); dst.Data != want {
			t.Errorf("launch %d decoded dst.data %#x, want %#x", i, dst.Data, want)
		}
	}
}

// Freeing and reallocating a buffer at the same address makes the replay
// stale: the same params bytes then name new memory, which the launch
// must write, not the freed allocation's.
func TestReplayAfterFreeAndMalloc(t *testing.T) {
	e := newEnv(t)
	r := newRand(7)
	a, b := randTensor(r, ops.F32, 16, 4), randTensor(r, ops.F32, 16, 4)
	args, at := e.addLaunch(a, b)
	e.mustLaunch("el_map_f32", args)
	old := e.replayOf("el_map_f32", args)
	if old == nil {
		t.Fatal("no replay kept")
	}
	n := uint64(16 * 4 * 4)
	if err := e.d.Free(context.Background(), driver.DevPtr(at)); err != nil {
		t.Fatal(err)
	}
	if e.replayOf("el_map_f32", args) != nil {
		t.Error("a replay outlived the free of its dst: it keeps the freed memory alive")
	}
	p, err := e.d.Malloc(context.Background(), n, 64)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(p) != at {
		t.Fatalf("the new allocation is at %#x, not the freed %#x: the test needs the same address", p, at)
	}
	e.mustLaunch("el_map_f32", args)
	sameBits(t, e.download(ops.New(ops.F32, 16, 4), at), refOut(t, ops.OpAdd, []*ops.Tensor{a, b}, nil))
	if rp := e.replayOf("el_map_f32", args); rp == old || rp == nil || rp.gen != e.d.mem.gen {
		t.Errorf("the replay was not resolved again after free and malloc (old %p, now %p)", old, rp)
	}
}

// A kernel that computes into host memory of its own (the fused
// rms_norm_mul_f32's intermediate) or writes memory itself (memops) is
// not replayed: its one compute call is not the whole kernel.
func TestReplayOnlyWholeKernels(t *testing.T) {
	e := newEnv(t)
	r := newRand(8)
	x, w := randTensor(r, ops.F32, 32, 2), randTensor(r, ops.F32, 32)
	var v abi.Values
	v.SetTensor("src0", e.desc(x, e.upload(x), ""))
	v.SetTensor("src1", e.desc(w, e.upload(w), ""))
	dst := ops.New(ops.F32, 32, 2)
	v.SetTensor("dst", e.desc(dst, e.upload(dst), ops.OpMul))
	v.SetFloat("eps", 1e-5)
	args := e.encode("rms_norm_mul_f32", v)
	e.mustLaunch("rms_norm_mul_f32", args)
	e.mustLaunch("rms_norm_mul_f32", args)
	if e.replayOf("rms_norm_mul_f32", args) != nil {
		t.Error("rms_norm_mul_f32 (two compute calls, a host intermediate) got a replay")
	}
}

// The launch log keeps every record in order across its chunks, and its
// runs of repeated launches expand to the records they stand for.
func TestLaunchLog(t *testing.T) {
	var l launchLog
	var want []LaunchRecord
	add := func(r LaunchRecord) {
		l.add(r)
		want = append(want, r)
	}
	cycle := uint64(0)
	for i := range 8*launchChunk + 7 {
		// Runs of 1 to 5 repeats of a launch, and now and then one that
		// breaks a run: another kernel, params size, duration, an
		// uberkernel list or a gap before it.
		k, d := fmt.Sprint("k", i/5%3), uint64(10+i/5%4)
		r := LaunchRecord{Kernel: k, StartCycle: cycle, EndCycle: cycle + d, ParamsSize: 8}
		switch i % 97 {
		case 13:
			r.ParamsSize = 16
		case 29:
			r.Insts = []string{"a", "b"}
		case 41:
			r.StartCycle++
			r.EndCycle++
		}
		add(r)
		cycle = r.EndCycle
	}
	if l.n != len(want) {
		t.Fatalf("n = %d, want %d", l.n, len(want))
	}
	runs := 0
	for _, ch := range l.chunks {
		runs += len(ch)
	}
	if runs >= len(want)/2 || len(l.chunks) < 2 {
		t.Fatalf("%d launches in %d runs and %d chunks: repeats were not coalesced, or the test spans one chunk",
			len(want), runs, len(l.chunks))
	}
	for _, from := range []int{-1, 0, 1, 2, 4, 5, 6, launchChunk - 1, launchChunk, launchChunk + 1, 2 * launchChunk, 6*launchChunk + 3, len(want) - 1, len(want), len(want) + 5} {
		got := l.from(from)
		w := want[min(max(from, 0), len(want)):]
		if len(got) != len(w) {
			t.Fatalf("from(%d): %d records, want %d", from, len(got), len(w))
		}
		for j := range got {
			if !reflect.DeepEqual(got[j], w[j]) {
				t.Fatalf("from(%d)[%d] = %+v, want %+v", from, j, got[j], w[j])
			}
		}
	}
}

// An in-place add (dst is src0, which add does not handle in place)
// computes into a copy of the allocation, replayed too: each launch adds
// b to what the last one wrote.
func TestReplayInPlaceAdd(t *testing.T) {
	e := newEnv(t)
	args, a, b, at := e.inPlaceAdd()
	want := a
	for i := range 3 {
		e.mustLaunch("el_map_f32", args)
		want = refOut(t, ops.OpAdd, []*ops.Tensor{want, b}, nil)
		sameBits(t, e.download(a, at), want)
		if rp := e.replayOf("el_map_f32", args); rp == nil || !rp.clone {
			t.Fatalf("launch %d: replay %+v, want one that computes into a copy", i, rp)
		}
	}
}

// A replayed set_rows into its own f16 cache runs set_rows' bound form
// (ops.BindFunc): it reads the rows and indices as they are now, and an
// index outside the cache is a stream error with the cache untouched.
func TestReplaySetRowsBound(t *testing.T) {
	e := newEnv(t)
	r := newRand(9)
	cache := randTensor(r, ops.F16, 64, 8)
	cacheAt := e.upload(cache)
	src := randTensor(r, ops.F32, 64, 2)
	srcAt, idxAt := e.upload(src), e.upload(ops.FromInts(ops.I64, []int64{2}, []int64{1, 6}))
	var v abi.Values
	v.SetTensor("dst", e.desc(cache, cacheAt, ops.OpSetRows))
	v.SetTensor("src0", e.desc(src, srcAt, ""))
	v.SetTensor("src1", e.desc(ops.New(ops.I64, 2), idxAt, ""))
	args := e.encode("set_rows_f32", v)
	e.mustLaunch("set_rows_f32", args)
	if rp := e.replayOf("set_rows_f32", args); rp == nil || rp.bound == nil {
		t.Fatalf("set_rows into its own f16 cache: replay %+v, want one with a bound form", rp)
	}

	// New rows and indices, the same bytes: the rows land where the new
	// indices say, each value rounded to a half.
	src2 := randTensor(r, ops.F32, 64, 2)
	if err := e.d.Write(e.ctx, driver.DevPtr(srcAt), src2.Buf); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Write(e.ctx, driver.DevPtr(idxAt), ops.FromInts(ops.I64, []int64{2}, []int64{7, 0}).Buf); err != nil {
		t.Fatal(err)
	}
	before := e.download(cache, cacheAt)
	e.mustLaunch("set_rows_f32", args)
	got := e.download(cache, cacheAt)
	rows := ops.FromF32(ops.F16, []int64{64, 2}, src2.ToF32())
	want := append([]byte(nil), before.Buf...)
	copy(want[7*128:8*128], rows.Buf[:128])
	copy(want[0:128], rows.Buf[128:])
	if string(got.Buf) != string(want) {
		t.Fatal("a replayed set_rows did not write the new rows at the new indices")
	}

	if err := e.d.Write(e.ctx, driver.DevPtr(idxAt), ops.FromInts(ops.I64, []int64{2}, []int64{3, 8}).Buf); err != nil {
		t.Fatal(err)
	}
	serrs := e.launch("set_rows_f32", args)
	if len(serrs) != 1 || !strings.Contains(serrs[0].Message, "idx[1, 0, 0] = 8 is outside dst rows 0..7") {
		t.Fatalf("index 8 of an 8-row cache: stream errors %v", serrs)
	}
	if string(e.download(cache, cacheAt).Buf) != string(want) {
		t.Fatal("a failed set_rows wrote the cache")
	}
}

// inPlaceAdd uploads a and b ([64, 2], seed 9) and encodes el_map_f32
// a += b; it returns the params, a, b and a's address.
func (e *env) inPlaceAdd() ([]byte, *ops.Tensor, *ops.Tensor, uint64) {
	r := newRand(9)
	a, b := randTensor(r, ops.F32, 64, 2), randTensor(r, ops.F32, 64, 2)
	at := e.upload(a)
	var v abi.Values
	v.SetTensor("src0", e.desc(a, at, ""))
	v.SetTensor("src1", e.desc(b, e.upload(b), ""))
	v.SetTensor("dst", e.desc(a, at, ops.OpAdd))
	return e.encode("el_map_f32", v), a, b, at
}

// LaunchRepeat(n) is n launches: from a fresh device, an in-place add
// repeated 5 times leaves what 5 Launch calls leave (the sum, the launch
// log, the decoded params); a set_rows with an index outside its cache
// repeated 3 times is 3 stream errors; a closed device or an unknown
// kernel fails as Launch does.
func TestLaunchRepeat(t *testing.T) {
	type outcome struct {
		sum     []byte
		log     []LaunchRecord
		decoded int
	}
	addRuns := func(repeat bool) outcome {
		e := newEnv(t)
		args, a, _, at := e.inPlaceAdd()
		id, err := e.d.LoadKernel(e.ctx, "el_map_f32", nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := driver.LaunchOptions{ShireMask: 0xFFFFFFFF}
		if repeat {
			err = e.d.LaunchRepeat(e.ctx, id, args, opts, 5)
		} else {
			for range 5 {
				if err = e.d.Launch(e.ctx, id, args, opts); err != nil {
					break
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if serrs, err := e.d.Sync(e.ctx); err != nil || len(serrs) > 0 {
			t.Fatal(err, serrs)
		}
		return outcome{e.download(a, at).Buf, e.d.Launches(), len(e.d.TakeDecoded())}
	}
	one, rep := addRuns(false), addRuns(true)
	if !reflect.DeepEqual(one, rep) || len(rep.log) != 5 || rep.decoded != 5 {
		t.Fatalf("LaunchRepeat(5): log %v, %d decoded; 5 Launch calls: log %v, %d decoded (same sum: %v)",
			rep.log, rep.decoded, one.log, one.decoded, string(one.sum) == string(rep.sum))
	}

	e := newEnv(t)
	cache := ops.New(ops.F16, 64, 8)
	var v abi.Values
	v.SetTensor("dst", e.desc(cache, e.upload(cache), ops.OpSetRows))
	src := ops.New(ops.F32, 64, 1)
	v.SetTensor("src0", e.desc(src, e.upload(src), ""))
	idx := ops.FromInts(ops.I64, []int64{1}, []int64{8})
	v.SetTensor("src1", e.desc(idx, e.upload(idx), ""))
	id, _ := e.d.LoadKernel(e.ctx, "set_rows_f32", nil)
	if err := e.d.LaunchRepeat(e.ctx, id, e.encode("set_rows_f32", v), driver.LaunchOptions{}, 3); err != nil {
		t.Fatal(err)
	}
	if serrs, err := e.d.Sync(e.ctx); err != nil || len(serrs) != 3 {
		t.Fatalf("3 launches with an index outside the cache: %v, stream errors %v, want 3", err, serrs)
	}
	if err := e.d.LaunchRepeat(e.ctx, id+1, nil, driver.LaunchOptions{}, 2); err == nil || !strings.Contains(err.Error(), "was not loaded") {
		t.Fatalf("an unknown kernel id: %v", err)
	}
	e.d.Close()
	if err := e.d.LaunchRepeat(e.ctx, id, nil, driver.LaunchOptions{}, 2); err != ErrClosed {
		t.Fatalf("a closed device: %v, want ErrClosed", err)
	}
}

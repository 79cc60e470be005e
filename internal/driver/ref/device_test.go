package ref

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

func TestInfo(t *testing.T) {
	d := New(Options{})
	info := d.Info()
	if info.Kind != driver.KindRef || info.Index != 0 || info.Name != "reference device" {
		t.Errorf("info = %+v", info)
	}
	if info.Props != driver.FakeProps() {
		t.Errorf("props = %+v, want the fake device's", info.Props)
	}
}

func TestMalloc(t *testing.T) {
	props := driver.FakeProps()
	tests := []struct {
		name    string
		size    uint64
		align   uint64
		wantErr string
	}{
		{"default alignment", 10, 0, ""},
		{"small alignment rounds up to 64", 10, 8, ""},
		{"large alignment", 100, 4096, ""},
		{"size 0", 0, 64, "size 0"},
		{"alignment not a power of two", 64, 96, "not a power of two"},
		{"larger than the device", props.MemoryBytes + 1, 64, "out of device memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Options{})
			d.Malloc(context.Background(), 1, 64) // the next block does not start at the base
			p, err := d.Malloc(context.Background(), tt.size, tt.align)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("malloc(%d, %d) = %#x, %v; want error %q", tt.size, tt.align, p, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			align := max(tt.align, 64)
			if uint64(p)%align != 0 {
				t.Errorf("malloc(%d, %d) = %#x, not %d-aligned", tt.size, tt.align, p, align)
			}
			if uint64(p) < props.DRAMBase || uint64(p)+tt.size > props.DRAMBase+props.MemoryBytes {
				t.Errorf("malloc = %#x, outside the DRAM region", p)
			}
		})
	}
}

func TestMallocReuseAndOutOfMemory(t *testing.T) {
	d := New(Options{})
	total := driver.FakeProps().MemoryBytes
	// The whole 32 GiB: the address space is sparse, nothing is touched.
	all, err := d.Malloc(context.Background(), total, 64)
	if err != nil {
		t.Fatalf("malloc the whole device: %v", err)
	}
	if uint64(all) != driver.FakeProps().DRAMBase {
		t.Errorf("first allocation at %#x, want the DRAM base", all)
	}
	if _, err := d.Malloc(context.Background(), 64, 64); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("malloc on a full device: %v, want ErrOutOfMemory", err)
	}
	if err := d.Free(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	a, _ := d.Malloc(context.Background(), 100, 64)
	b, _ := d.Malloc(context.Background(), 100, 64)
	c, _ := d.Malloc(context.Background(), 100, 64)
	if b-a != 128 || c-b != 128 {
		t.Errorf("blocks at %#x %#x %#x, want 128 bytes apart (100 rounded to cache lines)", a, b, c)
	}
	if err := d.Free(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(context.Background(), b); err == nil {
		t.Error("double free succeeded")
	}
	if err := d.Free(context.Background(), a+64); err == nil {
		t.Error("free of an address inside a block succeeded")
	}
	if b2, _ := d.Malloc(context.Background(), 64, 64); b2 != b {
		t.Errorf("first fit gave %#x, want the freed %#x", b2, b)
	}
	// Freeing everything coalesces the free list back to one range.
	for _, p := range []driver.DevPtr{a, b, c} {
		d.Free(context.Background(), p)
	}
	if got, err := d.Malloc(context.Background(), total, 64); err != nil || got != all {
		t.Errorf("after freeing all: malloc(all) = %#x, %v", got, err)
	}
}

func TestWriteRead(t *testing.T) {
	e := newEnv(t)
	p, _ := e.d.Malloc(context.Background(), 100, 64)
	q, _ := e.d.Malloc(context.Background(), 64, 64)
	data := []byte("the quick brown fox jumps over the lazy dog")
	if err := e.d.Write(e.ctx, p+10, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if err := e.d.Read(e.ctx, p+10, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %q, %v", got, err)
	}
	fresh := []byte{1, 2, 3}
	if err := e.d.Read(e.ctx, q, fresh); err != nil || !bytes.Equal(fresh, []byte{0, 0, 0}) {
		t.Errorf("read of an untouched block = %v, %v; want zeros", fresh, err)
	}
	for _, tt := range []struct {
		name string
		at   driver.DevPtr
		n    int
	}{
		{"past the end", p + 90, 11},
		{"in the padding", p + 100, 1},
		{"below the base", 0x10, 1},
		{"unallocated", p + 1<<20, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := e.d.Write(e.ctx, tt.at, make([]byte, tt.n)); err == nil {
				t.Error("write succeeded")
			}
			if err := e.d.Read(e.ctx, tt.at, make([]byte, tt.n)); err == nil {
				t.Error("read succeeded")
			}
		})
	}
	e.d.Free(context.Background(), p)
	if err := e.d.Read(e.ctx, p, got); err == nil {
		t.Error("read of a freed block succeeded")
	}
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.d.Write(ctx, q, []byte{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("write with a cancelled context: %v", err)
	}
}

func TestMaxHostBytes(t *testing.T) {
	d := New(Options{MaxHostBytes: 1 << 20})
	big, err := d.Malloc(context.Background(), 4<<20, 64)
	if err != nil {
		t.Fatal(err) // reserving is fine
	}
	if err := d.Write(context.Background(), big, []byte{1}); err == nil || !strings.Contains(err.Error(), "host memory") {
		t.Errorf("touching 4 MiB with a 1 MiB cap: %v", err)
	}
	small, _ := d.Malloc(context.Background(), 1<<20, 64)
	if err := d.Write(context.Background(), small, []byte{1}); err != nil {
		t.Errorf("touching 1 MiB: %v", err)
	}
}

func TestLoadKernel(t *testing.T) {
	e := newEnv(t)
	for _, k := range e.m.Kernels() {
		if _, err := e.d.LoadKernel(e.ctx, k, nil); err != nil {
			t.Errorf("load %s: %v", k, err)
		}
	}
	_, err := e.d.LoadKernel(e.ctx, "mul_mat_q9_9", nil)
	if err == nil || err.Error() != "kernel mul_mat_q9_9 is not built into the reference device (ABI manifest "+e.m.GGMLCommit()+")" {
		t.Errorf("unknown kernel: %v", err)
	}
}

func TestLaunchErrors(t *testing.T) {
	e := newEnv(t)
	id, _ := e.d.LoadKernel(e.ctx, "memops", nil)
	args := e.encode("memops", abi.Values{})
	tests := []struct {
		name string
		id   driver.KernelID
		mask uint64
		want string
	}{
		{"unknown kernel id", 99, 0, "not loaded"},
		{"kernel id 0", 0, 0, "not loaded"},
		{"shire outside the compute mask", id, 1 << 40, "not a subset"},
		{"master shire only", id, 1 << 32, "no compute shire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.d.Launch(e.ctx, tt.id, args, driver.LaunchOptions{ShireMask: tt.mask})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("launch: %v, want %q", err, tt.want)
			}
		})
	}
	for _, mask := range []uint64{0, 1, 0xFFFFFFFF, 0x1FFFFFFFF} {
		if err := e.d.Launch(e.ctx, id, args, driver.LaunchOptions{ShireMask: mask}); err != nil {
			t.Errorf("mask %#x: %v", mask, err)
		}
	}
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.d.Launch(ctx, id, args, driver.LaunchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled launch: %v", err)
	}
}

// elmapCase uploads a 16x2 add and returns the env, its values and the
// device address of dst.
func elmapCase(t *testing.T) (*env, abi.Values, *ops.Tensor, uint64, *ops.Tensor) {
	e := newEnv(t)
	r := newRand(7)
	a, b := randTensor(r, ops.F32, 16, 2), randTensor(r, ops.F32, 16, 2)
	dst := ops.New(ops.F32, 16, 2)
	var v abi.Values
	v.SetTensor("src0", e.desc(a, e.upload(a), ""))
	v.SetTensor("src1", e.desc(b, e.upload(b), ""))
	data := e.upload(dst)
	v.SetTensor("dst", e.desc(dst, data, ops.OpSub))
	return e, v, dst, data, refOut(t, ops.OpSub, []*ops.Tensor{a, b}, nil)
}

func TestFaults(t *testing.T) {
	t.Run("wrong args size", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		args := e.encode("el_map_f32", v)
		se := e.wantFault("el_map_f32", args[:len(args)-8], CodeInvalidArgsSize)
		if !strings.Contains(se.Message, "1000 bytes") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("desc outside any allocation", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		src := v.Tensors["src1"]
		src.Data += 1 << 30
		v.SetTensor("src1", src)
		se := e.wantFault("el_map_f32", e.encode("el_map_f32", v), CodeException)
		if c := se.Contexts[0]; c.Cause != causeLoadAccessFault || c.TVal != src.Data {
			t.Errorf("context %+v, want a load fault at %#x", c, src.Data)
		}
	})
	t.Run("dst running past its allocation", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		dst := v.Tensors["dst"]
		dst.Ne[1], dst.Nb[2], dst.Nb[3] = 3, 3*dst.Nb[1], 3*dst.Nb[1]
		v.SetTensor("dst", dst)
		se := e.wantFault("el_map_f32", e.encode("el_map_f32", v), CodeException)
		if se.Contexts[0].Cause != causeStoreAccessFault {
			t.Errorf("context %+v, want a store fault", se.Contexts[0])
		}
	})
	t.Run("el_map with dst.op not add, sub or mul", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		dst := v.Tensors["dst"]
		dst.Op, _ = e.m.OpValue("mul_mat")
		v.SetTensor("dst", dst)
		se := e.wantFault("el_map_f32", e.encode("el_map_f32", v), CodeUserError)
		if !strings.Contains(se.Message, "MUL_MAT") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("wrong source type", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		src := v.Tensors["src0"]
		src.Type = ops.F16
		v.SetTensor("src0", src)
		se := e.wantFault("el_map_f32", e.encode("el_map_f32", v), CodeUserError)
		if !strings.Contains(se.Message, "src0 is f16, want f32") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("no reference implementation", func(t *testing.T) {
		// Every kernel of the embedded manifest has one: use a manifest
		// that names a kernel the reference device does not know.
		y := strings.Replace(string(abi.DefaultYAML()), "\nkernels:\n", "\nkernels:\n  future_f32: tri\n", 1)
		m, err := abi.Parse("future.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t)
		e.d = New(Options{Manifest: m})
		t.Cleanup(func() { e.d.Close() })
		l, _ := m.LayoutFor("future_f32")
		se := e.wantFault("future_f32", make([]byte, l.Size), CodeUserError)
		if se.Message != "future_f32: kernel future_f32 has no reference implementation yet" {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("zero params", func(t *testing.T) {
		e := newEnv(t)
		e.wantFault("el_map_f32", make([]byte, 1008), CodeUserError)
	})
	t.Run("launch continues after a fault", func(t *testing.T) {
		e, v, dst, data, want := elmapCase(t)
		args := e.encode("el_map_f32", v)
		id, _ := e.d.LoadKernel(e.ctx, "el_map_f32", nil)
		e.d.Launch(e.ctx, id, args[:10], driver.LaunchOptions{})
		e.d.Launch(e.ctx, id, args, driver.LaunchOptions{})
		serrs, err := e.d.Sync(e.ctx)
		if err != nil || len(serrs) != 1 {
			t.Fatalf("sync: %v, %v; want one stream error", serrs, err)
		}
		sameBits(t, e.download(dst, data), want)
		if serrs, _ := e.d.Sync(e.ctx); len(serrs) != 0 {
			t.Errorf("second sync returned %v again", serrs)
		}
	})
}

// TestLayoutBugIsCaught shows that the device reads params as the kernel
// would: bytes encoded with the wrong layout give a different result or a
// fault, never the right answer by accident.
func TestLayoutBugIsCaught(t *testing.T) {
	t.Run("src0 and src1 swapped", func(t *testing.T) {
		e, v, dst, data, want := elmapCase(t)
		v.Tensors["src0"], v.Tensors["src1"] = v.Tensors["src1"], v.Tensors["src0"]
		e.mustLaunch("el_map_f32", e.encode("el_map_f32", v))
		if !differs(e.download(dst, data), want) {
			t.Error("a - b with the sources swapped gave a - b")
		}
	})
	t.Run("scale and bias swapped", func(t *testing.T) {
		e := newEnv(t)
		x := randTensor(newRand(3), ops.F32, 32, 2)
		dst := ops.New(ops.F32, 32, 2)
		var v abi.Values
		v.SetTensor("src0", e.desc(x, e.upload(x), ""))
		data := e.upload(dst)
		v.SetTensor("dst", e.desc(dst, data, ""))
		// A buggy layout: bias@672, scale@676.
		good, _ := e.m.LayoutFor("scale_f32")
		bad := *good
		bad.Fields = append([]abi.Field(nil), good.Fields...)
		for i := range bad.Fields {
			switch bad.Fields[i].Name {
			case "scale":
				bad.Fields[i].Offset = 676
			case "bias":
				bad.Fields[i].Offset = 672
			}
		}
		v.SetFloat("scale", 2)
		v.SetFloat("bias", 0.5)
		args, err := e.m.Encode(&bad, v)
		if err != nil {
			t.Fatal(err)
		}
		e.mustLaunch("scale_f32", args)
		want := refOut(t, ops.OpScale, []*ops.Tensor{x}, map[string]any{"scale": 2.0, "bias": 0.5})
		if !differs(e.download(dst, data), want) {
			t.Error("scale and bias at each other's offsets gave the right result")
		}
	})
	t.Run("eps missing from the struct", func(t *testing.T) {
		e := newEnv(t)
		x := ops.FromF32(ops.F32, []int64{16}, make([]float32, 16)) // all zeros: only eps matters
		x.SetF32(0, 0, 0, 0, 1e-4)
		dst := ops.New(ops.F32, 16)
		var v abi.Values
		v.SetTensor("src0", e.desc(x, e.upload(x), ""))
		data := e.upload(dst)
		v.SetTensor("dst", e.desc(dst, data, ""))
		args := e.encode("rms_norm_f32", v) // eps left at 0
		e.mustLaunch("rms_norm_f32", args)
		want := refOut(t, ops.OpRMSNorm, []*ops.Tensor{x}, map[string]any{"eps": 1e-2})
		if !differs(e.download(dst, data), want) {
			t.Error("eps 0 gave the eps 1e-2 result")
		}
	})
	t.Run("params for another kernel", func(t *testing.T) {
		e, v, _, _, _ := elmapCase(t)
		args := e.encode("el_map_f32", v) // 1008 bytes, a valid binary struct
		e.wantFault("mul_mat_Q8_0", append(args, make([]byte, 336)...), CodeUserError)
	})
}

func TestUberkernel(t *testing.T) {
	e := newEnv(t)
	r := newRand(11)
	x := randTensor(r, ops.F32, 32, 4)
	w := randTensor(r, ops.F32, 32)
	mid := ops.New(ops.F32, 32, 4)
	out := ops.New(ops.F32, 32, 4)
	xd, wd, midd, outd := e.upload(x), e.upload(w), e.upload(mid), e.upload(out)

	// inst 0: mid = rms_norm(x) * w; inst 1: out = mid * 0.5 + 1 (reads inst 0's result).
	var v0 abi.Values
	v0.SetTensor("src0", e.desc(x, xd, ""))
	v0.SetTensor("src1", e.desc(w, wd, ""))
	v0.SetTensor("dst", e.desc(mid, midd, ops.OpMul))
	v0.SetFloat("eps", 1e-5)
	var v1 abi.Values
	v1.SetTensor("src0", e.desc(mid, midd, ""))
	v1.SetTensor("dst", e.desc(out, outd, ops.OpScale))
	v1.SetFloat("scale", 0.5)
	v1.SetFloat("bias", 1)

	batch := abi.NewBatch(e.m)
	if _, err := batch.Add("rms_norm_mul_f32", e.encode("rms_norm_mul_f32", v0)); err != nil {
		t.Fatal(err)
	}
	if _, err := batch.Add("scale_f32", e.encode("scale_f32", v1)); err != nil {
		t.Fatal(err)
	}
	upload := func(b []byte) uint64 {
		return e.upload(&ops.Tensor{Buf: b})
	}
	launch := func(insts []byte) []byte {
		return abi.EncodeLaunch(batch.Launch(upload(insts), upload(batch.Blob())))
	}

	e.mustLaunch("uberkernel", launch(batch.InstBytes()))
	norm := refOut(t, ops.OpMul, []*ops.Tensor{refOut(t, ops.OpRMSNorm, []*ops.Tensor{x}, map[string]any{"eps": float32(1e-5)}), w}, nil)
	sameBits(t, e.download(mid, midd), norm)
	sameBits(t, e.download(out, outd), refOut(t, ops.OpScale, []*ops.Tensor{norm}, map[string]any{"scale": 0.5, "bias": 1.0}))
	recs := e.d.Launches()
	if last := recs[len(recs)-1]; last.Kernel != "uberkernel" || strings.Join(last.Insts, ",") != "rms_norm_mul_f32,scale_f32" || last.ParamsSize != 24 {
		t.Errorf("launch record %+v", last)
	}

	t.Run("unknown kernel id stops the loop", func(t *testing.T) {
		clear(out.Buf)
		outd2 := e.upload(out)
		v1.SetTensor("dst", e.desc(out, outd2, ops.OpScale))
		b := abi.NewBatch(e.m)
		b.Add("scale_f32", e.encode("scale_f32", v1))
		insts := b.Insts()
		insts = append([]abi.Inst{{KernelID: 999}}, insts...)
		args := abi.EncodeLaunch(abi.Launch{NumInsts: 2, InstStride: abi.InstSize, Insts: upload(abi.EncodeInsts(insts)), ParamsBlob: upload(b.Blob())})
		se := e.wantFault("uberkernel", args, CodeUserError)
		if !strings.Contains(se.Message, "inst 0") || !strings.Contains(se.Message, "999") {
			t.Errorf("message %q", se.Message)
		}
		got := e.download(out, outd2)
		if !bytes.Equal(got.Buf, make([]byte, len(got.Buf))) {
			t.Error("the instruction after the failing one ran")
		}
	})
	t.Run("instruction array outside memory", func(t *testing.T) {
		args := abi.EncodeLaunch(abi.Launch{NumInsts: 1, InstStride: abi.InstSize, Insts: 0x10, ParamsBlob: 0x10})
		e.wantFault("uberkernel", args, CodeException)
	})
	t.Run("fault inside an instruction", func(t *testing.T) {
		bad := v1
		bad.Tensors = map[string]abi.TensorDesc{"src0": v1.Tensors["src0"], "dst": v1.Tensors["dst"]}
		d := bad.Tensors["dst"]
		d.Data = 0x40
		bad.Tensors["dst"] = d
		b := abi.NewBatch(e.m)
		b.Add("scale_f32", e.encode("scale_f32", bad))
		args := abi.EncodeLaunch(b.Launch(upload(b.InstBytes()), upload(b.Blob())))
		se := e.wantFault("uberkernel", args, CodeException)
		if !strings.HasPrefix(se.Message, "uberkernel: uberkernel inst 0 (scale_f32): ") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("empty", func(t *testing.T) {
		e.mustLaunch("uberkernel", abi.EncodeLaunch(abi.Launch{InstStride: abi.InstSize}))
	})
}

func TestTiming(t *testing.T) {
	p := driver.FakeProps()
	tests := []struct {
		name  string
		cost  Cost
		insts int
		want  uint64
	}{
		{"empty launch is the overhead", Cost{}, 0, LaunchOverheadCycles},
		{"memory bound: 128 bytes per cycle", Cost{Bytes: 1280000}, 0, LaunchOverheadCycles + 10000},
		{"compute bound", Cost{Flops: 16384 * 50000, Bytes: 128}, 0, LaunchOverheadCycles + 50000},
		{"rounds up", Cost{Bytes: 129}, 0, LaunchOverheadCycles + 2},
		{"uberkernel barriers", Cost{}, 3, LaunchOverheadCycles + 3*InstOverheadCycles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cycles(p, tt.cost, tt.insts); got != tt.want {
				t.Errorf("Cycles = %d, want %d", got, tt.want)
			}
		})
	}

	e := newEnv(t)
	r := newRand(5)
	a, b := randTensor(r, ops.F32, 64, 32), randTensor(r, ops.F32, 64, 8)
	dst := ops.New(ops.F32, 32, 8)
	var v abi.Values
	v.SetTensor("src0", e.desc(a, e.upload(a), ""))
	v.SetTensor("src1", e.desc(b, e.upload(b), ""))
	v.SetTensor("dst", e.desc(dst, e.upload(dst), ops.OpMulMat))
	args := e.encode("mul_mat_f32", v)
	e.mustLaunch("mul_mat_f32", args)
	e.mustLaunch("mul_mat_f32", args)
	recs := e.d.Launches()
	if len(recs) != 2 {
		t.Fatalf("%d launch records, want 2", len(recs))
	}
	bytes := int64(len(a.Buf) + len(b.Buf) + len(dst.Buf))
	flops := int64(2 * 64 * 32 * 8)
	want := Cycles(p, Cost{Flops: flops, Bytes: bytes}, 0)
	if recs[0].StartCycle != 0 || recs[0].EndCycle != want || recs[1].StartCycle != want || recs[1].EndCycle != 2*want {
		t.Errorf("records %+v, want two launches of %d cycles back to back", recs, want)
	}
	if recs[0].Kernel != "mul_mat_f32" || recs[0].ParamsSize != 1008 {
		t.Errorf("record %+v", recs[0])
	}
}

func TestClose(t *testing.T) {
	d := New(Options{})
	ctx := context.Background()
	p, _ := d.Malloc(context.Background(), 64, 64)
	id, _ := d.LoadKernel(ctx, "memops", nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{
		"malloc": func() error { _, err := d.Malloc(context.Background(), 64, 64); return err }(),
		"free":   d.Free(context.Background(), p),
		"write":  d.Write(ctx, p, []byte{1}),
		"read":   d.Read(ctx, p, []byte{1}),
		"load":   func() error { _, err := d.LoadKernel(ctx, "memops", nil); return err }(),
		"launch": d.Launch(ctx, id, make([]byte, 24), driver.LaunchOptions{}),
		"sync":   func() error { _, err := d.Sync(ctx); return err }(),
		"close":  d.Close(),
	}
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed", name, err)
		}
	}
}

// TestWriteLarge: an upload of several copyChunk, at an odd offset and of
// an odd length, is copied whole (in parallel) and nothing around it.
func TestWriteLarge(t *testing.T) {
	e := newEnv(t)
	n := 5*copyChunk + 12345
	p, err := e.d.Malloc(context.Background(), uint64(n+100), 64)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>16)
	}
	if err := e.d.Write(e.ctx, p+7, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n+100)
	if err := e.d.Read(e.ctx, p, got); err != nil {
		t.Fatal(err)
	}
	want := append(append(make([]byte, 7), data...), make([]byte, 93)...)
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("byte %d: %d, want %d", i, got[i], want[i])
			}
		}
	}
}

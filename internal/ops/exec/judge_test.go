package exec

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/verdict"
)

// launch is one launch as the device saw it: the kernel and its params
// decoded through the manifest.
type launch struct {
	kernel string
	v      abi.Values
}

// spyDevice wraps the reference device: it records every launch's decoded
// params and, after the Sync that follows a launch of kernel perturb, scales
// that launch's f32 dst by factor (a kernel that is slightly off).
type spyDevice struct {
	driver.Device
	t        *testing.T
	m        *abi.Manifest
	names    map[driver.KernelID]string
	launches []launch
	perturb  string
	factor   float32
	pending  []abi.TensorDesc
	// writes holds the bytes last written at each address (uploads).
	writes map[driver.DevPtr][]byte
}

func (d *spyDevice) Write(ctx context.Context, dst driver.DevPtr, src []byte) error {
	if d.writes == nil {
		d.writes = map[driver.DevPtr][]byte{}
	}
	d.writes[dst] = append([]byte(nil), src...)
	return d.Device.Write(ctx, dst, src)
}

func newSpy(t *testing.T, perturb string, factor float32) *spyDevice {
	return &spyDevice{Device: ref.New(ref.Options{}), t: t, m: abi.Default(), names: map[driver.KernelID]string{}, perturb: perturb, factor: factor}
}

func (d *spyDevice) LoadKernel(ctx context.Context, name string, elf []byte) (driver.KernelID, error) {
	id, err := d.Device.LoadKernel(ctx, name, elf)
	d.names[id] = name
	return id, err
}

func (d *spyDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, opts driver.LaunchOptions) error {
	name := d.names[k]
	l, ok := d.m.LayoutFor(name)
	if !ok {
		d.t.Fatalf("no layout for %s", name)
	}
	v, err := d.m.Decode(l, args)
	if err != nil {
		d.t.Fatalf("decode %s: %v", name, err)
	}
	d.launches = append(d.launches, launch{kernel: name, v: v})
	if name == d.perturb {
		dst, _ := v.Tensor("dst")
		d.pending = append(d.pending, dst)
	}
	return d.Device.Launch(ctx, k, args, opts)
}

func (d *spyDevice) Sync(ctx context.Context) ([]driver.StreamError, error) {
	errs, err := d.Device.Sync(ctx)
	for _, t := range d.pending {
		n := t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3]
		buf := make([]byte, 4*n)
		if err := d.Device.Read(ctx, driver.DevPtr(t.Data), buf); err != nil {
			d.t.Fatal(err)
		}
		for i := int64(0); i < n; i++ {
			x := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x*d.factor))
		}
		if err := d.Device.Write(ctx, driver.DevPtr(t.Data), buf); err != nil {
			d.t.Fatal(err)
		}
	}
	d.pending = nil
	return errs, err
}

// graphBuilder builds small plan graphs for these tests.
type graphBuilder struct {
	t *testing.T
	g *plan.Graph
}

func newGraph(t *testing.T) *graphBuilder { return &graphBuilder{t: t, g: plan.NewGraph()} }

func (b *graphBuilder) leaf(name string, typ ops.Type, ne ...int64) *graphBuilder {
	n := int64(1)
	for _, v := range ne {
		n *= v
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32((i*37+len(name)*11)%29)/14 - 1
	}
	if _, err := b.g.AddLeaf(name, ops.FromF32(typ, ne, data)); err != nil {
		b.t.Fatal(err)
	}
	return b
}

func (b *graphBuilder) node(name string, op ops.Op, src []string, p map[string]any, inplace bool) *graphBuilder {
	if _, err := b.g.AddNodeInPlace(name, op, src, p, 0, inplace); err != nil {
		b.t.Fatal(err)
	}
	return b
}

func (b *graphBuilder) run(dev driver.Device, uber bool, opts Options, outputs ...string) *Result {
	b.t.Helper()
	if err := b.g.SetOutputs(outputs); err != nil {
		b.t.Fatal(err)
	}
	p, err := plan.Build(b.g, abi.Default(), plan.Options{Uberkernel: uber})
	if err != nil {
		b.t.Fatal(err)
	}
	res, err := Run(context.Background(), dev, p, opts)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

func output(t *testing.T, res *Result, name string) OutputResult {
	t.Helper()
	for _, o := range res.Outputs {
		if o.Output == name {
			return o
		}
	}
	t.Fatalf("no output %s in %+v", name, res.Outputs)
	return OutputResult{}
}

// A node after a slightly wrong one is judged on the device's own (wrong)
// inputs, as test-backend-ops judges each node: it passes, and the error
// it inherited shows as drift.
func TestNodeJudgedOnDeviceInputs(t *testing.T) {
	build := func() *graphBuilder {
		return newGraph(t).leaf("x", ops.F32, 64, 4).
			node("y", ops.OpScale, []string{"x"}, map[string]any{"scale": 2.0}, false).
			node("z", ops.OpSqr, []string{"y"}, nil, false)
	}
	dev := newSpy(t, "scale_f32", 1.001)
	res := build().run(dev, false, Options{}, "y", "z")
	y, z := output(t, res, "y"), output(t, res, "z")
	if y.Status != verdict.Fail || y.Compare.NMSE < 1e-7 {
		t.Errorf("y (perturbed scale): %s %s, want FAIL", y.Status, y.Compare)
	}
	if z.Status != verdict.Pass || z.Compare.NMSE > 1e-12 {
		t.Errorf("z on the device's y: %s %s, want PASS", z.Status, z.Compare)
	}
	// sqr doubles the relative error: (1.001^2 - 1)^2 ~ 4e-6.
	if z.Drift.NMSE < 1e-6 || z.Drift.NMSE > 1e-5 || z.DriftJudged || z.Drift.MaxNMSE != 0 {
		t.Errorf("z drift %g (judged %v, max %g), want ~4e-6 reported only", z.Drift.NMSE, z.DriftJudged, z.Drift.MaxNMSE)
	}
	if y.Drift.NMSE != y.Compare.NMSE {
		t.Errorf("y: drift %g != nmse %g (its inputs are leaves)", y.Drift.NMSE, y.Compare.NMSE)
	}

	// A case's graph tolerance judges the drift.
	res = build().run(newSpy(t, "scale_f32", 1.001), false, Options{GraphNMSE: 1e-6}, "z")
	if z := output(t, res, "z"); z.Status != verdict.Fail || !z.DriftJudged || z.Compare.NMSE > 1e-12 {
		t.Errorf("z with graph_nmse 1e-6: %s nmse %g drift %s, want FAIL on drift", z.Status, z.Compare.NMSE, z.Drift)
	}
	res = build().run(newSpy(t, "scale_f32", 1.001), false, Options{GraphNMSE: 1e-4}, "z")
	if z := output(t, res, "z"); z.Status != verdict.Pass {
		t.Errorf("z with graph_nmse 1e-4: %s drift %s, want PASS", z.Status, z.Drift)
	}
}

// Under the uberkernel both nodes are one launch: the host cannot see y
// between them, so z is judged on the reference of y (on its own inputs),
// and still passes.
func TestNodeJudgedInsideUberkernelSegment(t *testing.T) {
	g := newGraph(t).leaf("x", ops.F32, 64, 4).
		node("y", ops.OpScale, []string{"x"}, map[string]any{"scale": 2.0}, false).
		node("z", ops.OpScale, []string{"y"}, map[string]any{"scale": 0.5}, false)
	res := g.run(newSpy(t, "", 1), true, Options{}, "y", "z")
	for _, o := range res.Outputs {
		if o.Status != verdict.Pass || o.Compare.NMSE != 0 {
			t.Errorf("%s: %s %s", o.Output, o.Status, o.Compare)
		}
	}
}

// A fused MUL_MAT+ADD is judged at MUL_MAT's limit, not ADD's;
// RMS_NORM+MUL at 1e-7.
func TestFusedStepTolerance(t *testing.T) {
	g := newGraph(t).leaf("w", ops.Q8_0, 64, 32).leaf("x", ops.F32, 64, 2).leaf("bias", ops.F32, 32, 2).
		leaf("g", ops.F32, 32).
		node("mm", ops.OpMulMat, []string{"w", "x"}, nil, false).
		node("h", ops.OpAdd, []string{"mm", "bias"}, nil, false).
		node("hn", ops.OpRMSNorm, []string{"h"}, map[string]any{"eps": 1e-5}, false).
		node("hg", ops.OpMul, []string{"hn", "g"}, nil, false)
	// 1.001: NMSE ~1e-6 on h, over ADD's 1e-7, inside MUL_MAT's 5e-4.
	res := g.run(newSpy(t, "mul_mat_Q8_0", 1.001), false, Options{}, "h", "hg")
	h, hg := output(t, res, "h"), output(t, res, "hg")
	if h.Fusion != plan.FusionMulMatAdd || h.Compare.MaxNMSE != ops.MatMulMaxNMSE || h.Status != verdict.Pass {
		t.Errorf("h: fusion %q max %g status %s (%s), want mul_mat+add at %g, PASS", h.Fusion, h.Compare.MaxNMSE, h.Status, h.Compare, ops.MatMulMaxNMSE)
	}
	if h.Compare.NMSE <= ops.DefaultMaxNMSE {
		t.Errorf("h NMSE %g: the perturbation is too small to tell the limits apart", h.Compare.NMSE)
	}
	if hg.Fusion != plan.FusionRMSNormMul || hg.Compare.MaxNMSE != ops.DefaultMaxNMSE || hg.Status != verdict.Pass {
		t.Errorf("hg: fusion %q max %g status %s", hg.Fusion, hg.Compare.MaxNMSE, hg.Status)
	}
}

// An in-place node launches with dst.data == src0.data, like ggml-et; the
// reference device computes it correctly in place.
func TestInPlaceAliasing(t *testing.T) {
	for _, uber := range []bool{false, true} {
		dev := newSpy(t, "", 1)
		g := newGraph(t).leaf("x", ops.F32, 64, 5, 4, 3).
			node("out", ops.OpRMSNorm, []string{"x"}, map[string]any{"eps": 1e-6}, true)
		res := g.run(dev, uber, Options{}, "out")
		var rms *launch
		for i := range dev.launches {
			if dev.launches[i].kernel == "rms_norm_f32" {
				rms = &dev.launches[i]
			}
		}
		if uber {
			if len(dev.launches) != 1 || dev.launches[0].kernel != "uberkernel" {
				t.Fatalf("uberkernel=%v: launches %v", uber, dev.launches)
			}
		} else {
			if rms == nil {
				t.Fatalf("no rms_norm_f32 launch: %v", dev.launches)
			}
			src, _ := rms.v.Tensor("src0")
			dst, _ := rms.v.Tensor("dst")
			if src.Data == 0 || src.Data != dst.Data {
				t.Errorf("src0.data %#x dst.data %#x, want the same buffer", src.Data, dst.Data)
			}
		}
		if o := output(t, res, "out"); o.Status != verdict.Pass || o.Compare.NMSE != 0 {
			t.Errorf("uberkernel=%v: %s %s", uber, o.Status, o.Compare)
		}
	}
	// Without inplace the result has its own buffer.
	dev := newSpy(t, "", 1)
	newGraph(t).leaf("x", ops.F32, 64, 5).
		node("out", ops.OpRMSNorm, []string{"x"}, map[string]any{"eps": 1e-6}, false).run(dev, false, Options{}, "out")
	src, _ := dev.launches[0].v.Tensor("src0")
	dst, _ := dev.launches[0].v.Tensor("dst")
	if src.Data == dst.Data {
		t.Errorf("inplace=0: src0.data == dst.data %#x", src.Data)
	}
}

// A kernel that gets in-place wrong (as the emulator's rms_norm_f32 does)
// fails, judged against the input the host kept from before the launch.
func TestInPlaceKernelErrorIsCaught(t *testing.T) {
	g := newGraph(t).leaf("x", ops.F32, 64, 5).
		node("out", ops.OpRMSNorm, []string{"x"}, map[string]any{"eps": 1e-6}, true)
	res := g.run(newSpy(t, "rms_norm_f32", 1.5), false, Options{}, "out")
	if o := output(t, res, "out"); o.Status != verdict.Fail {
		t.Errorf("%s %s, want FAIL", o.Status, o.Compare)
	}
}

// A node reading the source an earlier in-place node overwrote sees the
// overwritten data (ggml's semantics), on the device and in both
// references; a chain of in-place nodes is judged node by node.
func TestInPlaceChain(t *testing.T) {
	for _, uber := range []bool{false, true} {
		g := newGraph(t).leaf("x", ops.F32, 64, 3).leaf("w", ops.F32, 64, 3).
			node("a", ops.OpScale, []string{"x"}, map[string]any{"scale": 3.0}, true).
			node("b", ops.OpAdd, []string{"x", "w"}, nil, true).
			node("c", ops.OpMul, []string{"x", "a"}, nil, false)
		res := g.run(newSpy(t, "", 1), uber, Options{}, "a", "b", "c")
		for _, o := range res.Outputs {
			// Drift is 0 too: a is compared with the chained reference as
			// scale left it, not with b, which overwrote its memory.
			if o.Status != verdict.Pass || o.Compare.NMSE != 0 || o.Drift.NMSE != 0 {
				t.Errorf("uberkernel=%v: %s %s %s drift %s", uber, o.Output, o.Status, o.Compare, o.Drift)
			}
		}
		// c = x*a where x and a are b's memory: (3x+w)^2.
		c := output(t, res, "c").Got.ToF32()
		w := g.g.Values[1].T
		want := make([]float32, len(c))
		for i := range want {
			xi := float32((i*37+1*11)%29)/14 - 1
			v := 3*xi + w.ToF32()[i]
			want[i] = v * v
		}
		if cmp := ops.Compare(c, want, 1e-10); !cmp.OK() {
			t.Errorf("uberkernel=%v: c = %v..., want (3x+w)^2 = %v... (%s)", uber, c[:3], want[:3], cmp)
		}
	}
}

// set_rows and set launch with dst in their first source's buffer: the
// dst address is where that source was uploaded.
func TestSetRowsAndSetAliasTheirSource(t *testing.T) {
	dev := newSpy(t, "", 1)
	g := newGraph(t).leaf("d", ops.F32, 64, 6).leaf("s", ops.F32, 64, 2).leaf("big", ops.F32, 64, 8).leaf("sub", ops.F32, 64, 2)
	if _, err := g.g.AddLeaf("idx", ops.FromInts(ops.I64, []int64{2}, []int64{4, 1})); err != nil {
		t.Fatal(err)
	}
	g.node("rows", ops.OpSetRows, []string{"d", "s", "idx"}, nil, false).
		node("patched", ops.OpSet, []string{"big", "sub"}, map[string]any{"offset": 512, "inplace": true}, false)
	uploaded := map[string][]byte{} // the leaves' bytes
	for _, name := range []string{"d", "big"} {
		i, _ := g.g.Lookup(name)
		uploaded[name] = append([]byte(nil), g.g.Values[i].T.Buf...)
	}
	leafBytes := func(name string) []byte { return uploaded[name] }
	res := g.run(dev, false, Options{}, "rows", "patched")
	for _, o := range res.Outputs {
		if o.Status != verdict.Pass {
			t.Errorf("%s: %s %s", o.Output, o.Status, o.Compare)
		}
	}
	want := map[string]string{"set_rows_f32": "d", "set_f32": "big"}
	for _, l := range dev.launches {
		src, ok := want[l.kernel]
		if !ok {
			continue
		}
		delete(want, l.kernel)
		dst, _ := l.v.Tensor("dst")
		up := dev.writes[driver.DevPtr(dst.Data)]
		if len(up) < len(leafBytes(src)) || string(up[:len(leafBytes(src))]) != string(leafBytes(src)) {
			t.Errorf("%s: dst.data %#x is not where %s was uploaded", l.kernel, dst.Data, src)
		}
	}
	if len(want) != 0 {
		t.Errorf("not launched: %v", want)
	}
	for name, b := range uploaded {
		if i, _ := g.g.Lookup(name); string(g.g.Values[i].T.Buf) != string(b) {
			t.Errorf("leaf %s lost its data after the run", name)
		}
	}
}

// An in-place node after a slightly wrong in-place node is judged on the
// memory as the wrong node left it (downloaded just before its launch),
// not on the upload it overwrote nor on the host's chained reference.
func TestInPlaceNodeJudgedOnSnapshot(t *testing.T) {
	g := newGraph(t).leaf("x", ops.F32, 64, 4).
		node("a", ops.OpScale, []string{"x"}, map[string]any{"scale": 2.0}, true).
		node("b", ops.OpSqr, []string{"a"}, nil, true)
	res := g.run(newSpy(t, "scale_f32", 1.001), false, Options{}, "a", "b")
	a, b := output(t, res, "a"), output(t, res, "b")
	if a.Status != verdict.Fail {
		t.Errorf("a (perturbed): %s %s, want FAIL", a.Status, a.Compare)
	}
	if b.Status != verdict.Pass || b.Compare.NMSE > 1e-12 || b.Drift.NMSE < 1e-6 {
		t.Errorf("b: %s %s drift %g, want PASS on a's device memory with drift", b.Status, b.Compare, b.Drift.NMSE)
	}
}

package ref

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// fuzzKernels are the kernels FuzzLaunch drives (by index).
var fuzzKernels = []string{
	"el_map_f32", "rms_norm_f32", "rms_norm_mul_f32", "scale_f32", "softmax_f32", "rope_f32",
	"glu_f32", "unary_f32", "get_rows_f32", "set_rows_f32", "cont_f32", "cpy_f32_f16",
	"mul_mat_f32", "mul_mat_Q8_0", "mul_mat_Q4_0", "flash_attn_ext_f16_me", "memops", "uberkernel",
	"tri_f32", "rwkv_wkv6_f32", "rwkv_wkv7_f32", "gated_delta_net_f32",
}

// FuzzLaunch feeds arbitrary params bytes to the kernels: whatever the
// bytes, Launch succeeds and the kernel either runs or reports a stream
// error; nothing panics or hangs. The buffers live at fixed addresses
// (a fresh device allocates deterministically), so seeds can point into
// them.
func FuzzLaunch(f *testing.F) {
	m := abi.Default()
	base := driver.FakeProps().DRAMBase
	const bufSize = fuzzBufSize
	// bases are valid params of the seeded kernels (zeros of the layout's
	// size for the others). An input patches them at an offset, so that
	// inputs stay small: whole params blobs (hundreds of bytes) as seeds
	// keep the fuzzer's minimiser busy for minutes on every new input.
	bases := make([][]byte, len(fuzzKernels))
	for i, k := range fuzzKernels {
		if l, ok := m.LayoutFor(k); ok {
			bases[i] = make([]byte, l.Size)
		}
	}
	// Seeds: valid params for a few kernels over the first two buffers.
	desc := func(i int, typ ops.Type, ne ...int64) abi.TensorDesc {
		x := ops.New(typ, ne...)
		return abi.DescFromTensor(x, base+uint64(i)*bufSize, 0, [abi.NumOpParams]int32{})
	}
	add := func(kernel string, v abi.Values) {
		l, _ := m.LayoutFor(kernel)
		b, err := m.Encode(l, v)
		if err != nil {
			f.Fatal(err)
		}
		for i, k := range fuzzKernels {
			if k == kernel {
				bases[i] = b
				f.Add(uint8(i), false, uint16(0), []byte{})
			}
		}
	}
	var v abi.Values
	v.SetTensor("src0", desc(0, ops.F32, 16, 4))
	v.SetTensor("src1", desc(1, ops.F32, 16))
	dst := desc(2, ops.F32, 16, 4)
	dst.Op, _ = m.OpValue("add")
	v.SetTensor("dst", dst)
	add("el_map_f32", v)
	add("mul_mat_f32", abi.Values{Tensors: map[string]abi.TensorDesc{
		"src0": desc(0, ops.F32, 16, 8), "src1": desc(1, ops.F32, 16, 2), "dst": desc(2, ops.F32, 8, 2)}})
	add("scale_f32", abi.Values{Tensors: map[string]abi.TensorDesc{"src0": desc(0, ops.F32, 64), "dst": desc(1, ops.F32, 64)},
		Floats: map[string]float32{"scale": 2}})
	add("memops", abi.Values{Uints: map[string]uint64{"dst_ptr": base + 8, "size": 100, "value": 7}})
	add("uberkernel", abi.Values{Uints: map[string]uint64{"num_insts": 1, "inst_stride": abi.InstSize, "insts": base, "params_blob": base + bufSize}})

	add("tri_f32", abi.Values{Tensors: map[string]abi.TensorDesc{"src0": desc(0, ops.F32, 16, 16), "dst": desc(1, ops.F32, 16, 16)},
		Ints: map[string]int64{"tri_type": 3}})
	add("rwkv_wkv6_f32", abi.Values{
		Uints: map[string]uint64{"k": base, "v": base + 512, "r": base + 1024, "td": base + 1536, "tf": base + 2048,
			"state_in": base + bufSize, "dst": base + 2*bufSize},
		Ints: map[string]int64{"C": 16, "H": 1, "S": 16, "T": 2, "n_seqs": 1}})
	add("rwkv_wkv7_f32", abi.Values{
		Uints: map[string]uint64{"r": base, "w": base + 512, "k": base + 1024, "v": base + 1536, "a": base + 2048, "b": base + 2560,
			"state_in": base + bufSize, "dst": base + 2*bufSize},
		Ints: map[string]int64{"C": 16, "H": 1, "S": 16, "T": 2, "n_seqs": 1}})
	add("gated_delta_net_f32", abi.Values{
		Tensors: map[string]abi.TensorDesc{"q": desc(0, ops.F32, 8, 1), "k": desc(0, ops.F32, 8, 1), "v": desc(0, ops.F32, 8, 1),
			"g": desc(0, ops.F32, 1, 1), "beta": desc(0, ops.F32, 1, 1), "state_in": desc(1, ops.F32, 8, 8), "dst": desc(2, ops.F32, 8, 9)},
		Ints:   map[string]int64{"S_v": 8, "H": 1, "H_q": 1, "H_k": 1, "n_tokens": 1, "n_seqs": 1, "n_seqs_q": 1, "n_seqs_k": 1, "K": 1},
		Floats: map[string]float32{"scale": 0.35355339}})

	f.Add(uint8(0), true, uint16(0), []byte{})
	f.Add(uint8(3), true, uint16(0), []byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, which uint8, raw bool, off uint16, patch []byte) {
		if len(patch) > maxFuzzPatch {
			return // see maxFuzzPatch
		}
		args := patch
		if b := bases[int(which)%len(fuzzKernels)]; !raw && len(b) > 0 {
			args = append([]byte(nil), b...)
			copy(args[int(off)%len(args):], patch)
		}
		launchOnce(t, which, args)
	})
}

// fuzzBufSize is the size of each of FuzzLaunch's four buffers.
const fuzzBufSize = 4096

// maxFuzzPatch bounds FuzzLaunch's patch: a few tensor descriptors' worth
// of bytes at any offset of a kernel's valid params (or that many raw
// params bytes); longer patches only feed the fuzzer's minimiser, whose
// cost grows with the square of an input's length.
const maxFuzzPatch = 128

// fuzzBufInit is the content of FuzzLaunch's buffers: small floats, made
// once rather than per input.
var fuzzBufInit = func() []byte {
	buf := make([]byte, fuzzBufSize)
	for j := 0; j+4 <= fuzzBufSize; j += 4 {
		binary.LittleEndian.PutUint32(buf[j:], 0x3f800000+uint32(j))
	}
	return buf
}()

// launchOnce is FuzzLaunch's body: kernel which on a fresh device whose
// four buffers hold small floats (the last one args too).
func launchOnce(t *testing.T, which uint8, args []byte) {
	const bufSize = fuzzBufSize
	base := driver.FakeProps().DRAMBase
	kernel := fuzzKernels[int(which)%len(fuzzKernels)]
	d := New(Options{MaxHostBytes: 1 << 20})
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		p, err := d.Malloc(context.Background(), bufSize, 64)
		if err != nil || uint64(p) != base+uint64(i)*bufSize {
			t.Fatalf("malloc %d = %#x, %v", i, p, err)
		}
		// Some non-trivial content: small floats, and the args
		// themselves in the last buffer (an uberkernel blob).
		buf := fuzzBufInit
		if i == 3 {
			buf = append([]byte(nil), fuzzBufInit...)
			copy(buf, args)
		}
		d.Write(ctx, p, buf)
	}
	id, err := d.LoadKernel(ctx, kernel, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Launch(ctx, id, args, driver.LaunchOptions{}); err != nil {
		t.Fatalf("launch %s: %v", kernel, err)
	}
	if _, err := d.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

package ref

import (
	"fmt"
	"testing"

	"github.com/ainekko/et/internal/ops/opstest"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// launchCase is one kernel launch at a shape of
// testcases/perf/llama3-8b.txt: its params bytes, ready to launch.
type launchCase struct {
	name, kernel string
	args         []byte
}

// llamaLaunches uploads the sources of get_rows, set_rows, add, mul,
// cont and cpy at n tokens (the shapes of testcases/perf/llama3-8b.txt;
// the get_rows table has 1024 rows instead of 32000, which changes no
// per-launch work) and encodes their params.
func llamaLaunches(e *env, n int64) []launchCase {
	r := newRand(uint64(n))
	f32 := func(ne ...int64) *ops.Tensor { return randTensor(r, ops.F32, ne...) }
	up := func(v *abi.Values, field string, x *ops.Tensor, op ops.Op) {
		v.SetTensor(field, e.desc(x, e.upload(x), op))
	}
	var out []launchCase
	add := func(name, kernel string, v abi.Values) {
		out = append(out, launchCase{name: fmt.Sprintf("%s/n=%d", name, n), kernel: kernel, args: e.encode(kernel, v)})
	}

	rows := make([]int64, n)
	kv := make([]int64, n)
	for i := range rows {
		rows[i] = int64(i*7919) % 1024
		kv[i] = int64(i*13) % 4096
	}
	var v abi.Values
	up(&v, "src0", randTensor(r, ops.Q8_0, 4096, 1024), "")
	up(&v, "src1", ops.FromInts(ops.I32, []int64{n}, rows), "")
	up(&v, "dst", ops.New(ops.F32, 4096, n), ops.OpGetRows)
	add("get_rows_q8_0", "get_rows_f32", v)

	v = abi.Values{}
	cache := ops.New(ops.F16, 1024, 4096)
	cacheAt := e.upload(cache)
	v.SetTensor("dst", e.desc(cache, cacheAt, ops.OpSetRows))
	up(&v, "src0", f32(1024, n), "")
	up(&v, "src1", ops.FromInts(ops.I64, []int64{n}, kv), "")
	add("set_rows_f16", "set_rows_f32", v)

	for _, op := range []ops.Op{ops.OpAdd, ops.OpMul} {
		v = abi.Values{}
		up(&v, "src0", f32(4096, n), "")
		if op == ops.OpAdd {
			up(&v, "src1", f32(4096, n), "")
		} else {
			up(&v, "src1", f32(4096), "")
		}
		up(&v, "dst", ops.New(ops.F32, 4096, n), op)
		add(string(op), "el_map_f32", v)
	}

	perm, err := ops.Permute(f32(128, n, 32), 0, 2, 1, 3)
	if err != nil {
		e.t.Fatal(err)
	}
	v = abi.Values{}
	up(&v, "src0", perm, "")
	up(&v, "dst", ops.New(ops.F32, 4096, n), ops.OpCont)
	add("cont", "cont_f32", v)

	v = abi.Values{}
	up(&v, "src0", f32(128, 8, n), "")
	up(&v, "dst", ops.New(ops.F16, 128, 8, n), ops.OpCpy)
	add("cpy_f32_f16", "cpy_f32_f16", v)
	return out
}

// BenchmarkLaunch times one launch + sync of small kernels on the
// reference device, as `et run-op --perf` times them: the same params
// bytes launched again and again. Besides ns/op it reports cpu-ms/op
// (process CPU time). Run with -benchmem for allocs/op.
func BenchmarkLaunch(b *testing.B) {
	for _, n := range []int64{1, 7, 32} {
		e := newEnv(b)
		ids := map[string]driver.KernelID{}
		for _, c := range llamaLaunches(e, n) {
			id, ok := ids[c.kernel]
			if !ok {
				var err error
				if id, err = e.d.LoadKernel(e.ctx, c.kernel, nil); err != nil {
					b.Fatal(err)
				}
				ids[c.kernel] = id
			}
			opts := driver.LaunchOptions{ShireMask: 0xFFFFFFFF, Barrier: true}
			b.Run(c.name, func(b *testing.B) {
				cpu0 := opstest.ProcessCPUNS()
				for b.Loop() {
					if err := e.d.Launch(e.ctx, id, c.args, opts); err != nil {
						b.Fatal(err)
					}
					serrs, err := e.d.Sync(e.ctx)
					if err != nil || len(serrs) > 0 {
						b.Fatal(err, serrs)
					}
				}
				b.ReportMetric(float64(opstest.ProcessCPUNS()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
			e.d.TakeDecoded()
		}
	}
}

package profile

import (
	"fmt"
	"io"
	"math/rand"

	"github.com/ainekko/et/internal/kernelmap"
)

// GenOptions configure Generate.
type GenOptions struct {
	// Bytes stops generation once at least this many bytes are written;
	// when 0, Ops operations are generated.
	Bytes int64
	Ops   int
	// Devices is the number of devices (default 1); each loads its own
	// copy of every kernel, so kernel names repeat with different ids.
	Devices int
	// Kernels is the number of distinct kernel names (default 8).
	Kernels int
	// Seed makes the output deterministic.
	Seed int64
	// FirstID is the first event id (ids are uint16 and wrap); set it near
	// 65535 to exercise wrapping early.
	FirstID uint16
	// FreqMHz is each device's frequency (default 1000).
	FreqMHz uint32
	// NoClose leaves the root object open, like a crashed run.
	NoClose bool
}

// GenResult describes a generated trace, for checking reports.
type GenResult struct {
	Events   int
	Bytes    int64
	Kernels  []kernelmap.Entry
	Launches int
	H2D, D2H int
	// ExecCycles is the total kernel exec per kernel name.
	ExecCycles map[string]uint64
	// LaunchesByName counts launches per kernel name.
	LaunchesByName map[string]int
	// Wraps is how many times the event id wrapped.
	Wraps int
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var genKernelNames = []string{
	"mul_mat_Q8_0", "mul_mat_f32", "rms_norm_mul_f32", "rope_f32", "soft_max_f32", "add_f32",
	"cont_f32", "cpy_f32_f16", "get_rows_f32", "mul_f32", "silu_f32", "scale_f32",
	"mul_mat_Q4_0", "mul_mat_f16", "glu_f32", "norm_f32",
}

// Generate writes a synthetic but self-consistent runtime trace (the event
// sequences of reference §2.2 for kernel launches and H2D/D2H copies) to
// w, for tests and benchmarks.
func Generate(w io.Writer, o GenOptions) (GenResult, error) {
	if o.Devices <= 0 {
		o.Devices = 1
	}
	if o.Kernels <= 0 {
		o.Kernels = 8
	}
	if o.FreqMHz == 0 {
		o.FreqMHz = 1000
	}
	if o.Bytes == 0 && o.Ops == 0 {
		o.Ops = 100
	}
	rng := rand.New(rand.NewSource(o.Seed))
	cw := &countWriter{w: w}
	tw := NewWriter(cw)
	res := GenResult{ExecCycles: map[string]uint64{}, LaunchesByName: map[string]int{}}
	t := int64(263745118400000)
	const mainT = MainThread
	bld := NewBuilder(tw.Write, o.FirstID)
	nextID := bld.NextID
	emit := bld.Emit
	tick := func(lo, hi int64) int64 { t += lo + rng.Int63n(hi-lo+1); return t }
	emit(&Event{Type: TypeInstant, Class: ClassStartProfiling, TimeNS: t, Thread: mainT, Has: HasVersion, Version: 3})
	type dev struct {
		stream  int
		cyc     uint64
		th      Threads
		kernels []int
	}
	devs := make([]*dev, o.Devices)
	kid := 0
	for d := range devs {
		dv := &dev{stream: d + 1, cyc: 412837152000 + uint64(d)*1000000, th: DeviceThreads(d)}
		devs[d] = dv
		emit(&Event{Type: TypeComplete, Class: ClassGetDevices, TimeNS: tick(1000, 5000), Thread: mainT, Has: HasDuration, DurationNS: 1873})
		emit(&Event{Type: TypeComplete, Class: ClassGetDeviceProperties, TimeNS: tick(1000, 5000), Thread: mainT, Has: HasDuration | HasDevice | HasProps, DurationNS: 5530, Device: d,
			Props: &DeviceProps{FrequencyMHz: o.FreqMHz, AvailableShires: 32, MemoryBWMBps: 128000, MemorySizeBytes: 16 << 30, CacheLineBytes: 64, ShireMask: 1<<32 - 1, TDPWatts: 25}})
		emit(&Event{Type: TypeComplete, Class: ClassCreateStream, TimeNS: tick(1000, 5000), Thread: mainT, Has: HasDuration | HasDevice | HasStream, DurationNS: 3000, Device: d, Stream: dv.stream})
		for k := 0; k < o.Kernels; k++ {
			name := genKernelNames[k%len(genKernelNames)]
			if k >= len(genKernelNames) {
				name = fmt.Sprintf("%s_%d", name, k/len(genKernelNames))
			}
			res.Kernels = append(res.Kernels, kernelmap.Entry{Name: name, ID: kid})
			dv.kernels = append(dv.kernels, kid)
			kid++
		}
	}
	kernelName := make([]string, kid)
	kernelBase := make([]uint64, kid)
	for _, e := range res.Kernels {
		kernelName[e.ID] = e.Name
		kernelBase[e.ID] = uint64(2000 + (e.ID%o.Kernels)*(e.ID%o.Kernels+1)*3000)
	}
	for op := 0; ; op++ {
		if o.Bytes > 0 {
			if cw.n >= o.Bytes {
				break
			}
		} else if op >= o.Ops {
			break
		}
		if bld.Err() != nil {
			break
		}
		d := rng.Intn(o.Devices)
		dv := devs[d]
		dv.cyc += uint64(500 + rng.Intn(20000))
		r := rng.Intn(10)
		switch {
		case r < 7:
			k := dv.kernels[rng.Intn(len(dv.kernels))]
			exec := kernelBase[k] + uint64(rng.Intn(int(kernelBase[k]/4+1)))
			wait := uint64(200 + rng.Intn(3000))
			K := nextID()
			launch := tick(2000, 8000)
			submit := launch + 1000 + rng.Int63n(20000)
			start := dv.cyc
			dv.cyc += wait + exec
			rsp := submit + int64(wait+exec)*1000/int64(o.FreqMHz) + 5000 + rng.Int63n(50000)
			bld.Launch(LaunchSpec{ID: K, Device: d, Stream: dv.stream, KernelID: k, Threads: dv.th,
				LaunchNS: launch, APIDurNS: submit - launch + 1000, SubmitNS: submit, ResponseNS: rsp, DispatchNS: rsp + 400,
				StartCycles: start, WaitCycles: wait, ExecCycles: exec})
			t = rsp + 400
			res.Launches++
			res.ExecCycles[kernelName[k]] += exec
			res.LaunchesByName[kernelName[k]]++
		default:
			h2d := r < 9
			E, C, S := nextID(), nextID(), nextID()
			size := uint64(4096 << rng.Intn(8))
			api := tick(2000, 8000)
			exec := size / 4
			wait := uint64(300 + rng.Intn(2000))
			start := dv.cyc
			dv.cyc += wait + exec
			submit := api + 10000
			rsp := submit + int64(wait+exec)*1000/int64(o.FreqMHz) + 5000
			cs := CopySpec{E: E, C: C, S: S, Device: d, Stream: dv.stream, Threads: dv.th, SizeBytes: size, Barrier: true,
				APINS: api, SubmitNS: submit, ResponseNS: rsp, CmdDoneNS: rsp + 300, CMADurNS: 8000,
				StartCycles: start, WaitCycles: wait, ExecCycles: exec,
				Wait: true, WaitNS: api + 21000, WaitDurNS: rsp + 11000 - api - 21000}
			if h2d {
				res.H2D++
				cs.Dir, cs.SrcPtr, cs.DstPtr, cs.APIDurNS = H2D, 0x7f0000000000, 0x8000000000, 20000
				cs.CMANS, cs.CMADoneNS, cs.DoneNS = api+1000, api+9500, rsp+1100
			} else {
				res.D2H++
				cs.Dir, cs.SrcPtr, cs.DstPtr, cs.APIDurNS = D2H, 0x8000000000, 0x7f0000000000, 15000
				cs.CMANS, cs.CMADoneNS, cs.DoneNS = rsp+1000, rsp+9500, rsp+10000
			}
			bld.Copy(cs)
			t = rsp + 11000
		}
	}
	emit(&Event{Type: TypeInstant, Class: ClassEndProfiling, TimeNS: tick(1000, 2000), Thread: mainT})
	res.Wraps = bld.Wraps()
	if err := bld.Err(); err != nil {
		return res, err
	}
	var err error
	if o.NoClose {
		err = tw.Flush()
	} else {
		err = tw.Close()
	}
	res.Events = tw.Events()
	res.Bytes = cw.n
	return res, err
}

// writeKernelMap writes the kernel map of a generated trace.
func writeKernelMap(w io.Writer, res GenResult) error {
	return kernelmap.Write(w, res.Kernels)
}

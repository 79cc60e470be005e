package profile

import (
	"bytes"
	"testing"

	"github.com/ainekko/et/internal/kernelmap"
)

type joined struct {
	launches []Launch
	copies   []Copy
	stats    JoinStats
	j        *Joiner
	w        *Warnings
}

func joinBytes(t *testing.T, b []byte, km *kernelmap.Map) joined {
	t.Helper()
	var out joined
	out.w = &Warnings{}
	out.j = NewJoiner(JoinOptions{Kernels: km, Warnings: out.w,
		OnLaunch: func(l *Launch) { out.launches = append(out.launches, *l) },
		OnCopy:   func(c *Copy) { out.copies = append(out.copies, *c) }})
	_, err := Decode(bytes.NewReader(b), Options{Warnings: out.w}, func(e Event) error {
		out.j.Add(&e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.stats = out.j.Flush()
	return out
}

func TestJoinSample(t *testing.T) {
	km := kernelmap.New(kernelmap.Entry{Name: "mul_mat_f32", ID: 0})
	r := joinBytes(t, readFixture(t, "sample.json"), km)
	if len(r.launches) != 1 {
		t.Fatalf("launches: %+v", r.launches)
	}
	l := r.launches[0]
	// Reference §3 "worked numbers".
	if l.Kernel != "mul_mat_f32" || !l.Complete() || l.Device != 0 || l.Stream != 1 || l.EventID != 8 {
		t.Errorf("launch = %+v", l)
	}
	if l.ExecCycles != 1732655 || l.ExecNS() != 1732655 || l.WaitNS() != 2480 || l.LaunchAPINS != 14900 {
		t.Errorf("launch times = %+v", l)
	}
	if l.EndToEndNS() != 1778600 || l.SubmitDelayNS() != 13400 {
		t.Errorf("end to end %d, submit %d", l.EndToEndNS(), l.SubmitDelayNS())
	}
	dirs := map[Direction]Copy{}
	for _, c := range r.copies {
		dirs[c.Direction] = c
	}
	h2d, d2h, in := dirs[H2D], dirs[D2H], dirs[Internal]
	if h2d.Bytes != 65536 || h2d.DMAExecCycles != 18650 || h2d.EndToEndNS() != 79400 || h2d.CMACopies != 1 || h2d.Commands != 1 || h2d.Device != 0 {
		t.Errorf("H2D = %+v", h2d)
	}
	if d2h.DMAWaitCycles != 1723635 || d2h.DMAExecCycles != 17980 || d2h.EventID != 9 {
		t.Errorf("D2H = %+v", d2h)
	}
	if in.EventID != 4 || in.SizeKnown || in.Commands != 1 || in.Status&SeenDispatch == 0 {
		t.Errorf("internal = %+v", in)
	}
	if len(r.copies) != 3 || r.stats.IncompleteCopies != 0 || r.stats.HostWaitNS != 1854400 || r.stats.Waits != 4 {
		t.Errorf("copies %d, stats %+v", len(r.copies), r.stats)
	}
	th := r.j.Threads()
	names := []string{}
	for _, x := range th {
		names = append(names, x.Name)
	}
	want := []string{"main", "dma-pool", "Host Runtime Device 0 command sender", "Host Runtime Device 0 response receiver", "callback"}
	if len(names) != len(want) {
		t.Fatalf("threads %v", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("thread %d = %q, want %q", i, names[i], want[i])
		}
	}
	if d := r.j.Devices(); len(d) != 1 || d[0].FreqMHz != 1000 || len(d[0].Streams) != 1 {
		t.Errorf("devices %+v", d)
	}
}

func TestJoinGenerated(t *testing.T) {
	tests := []struct {
		name string
		opts GenOptions
	}{
		{"one device", GenOptions{Ops: 300, Seed: 1}},
		{"wrapped ids", GenOptions{Ops: 30000, Seed: 2, FirstID: 65500}},
		{"two devices", GenOptions{Ops: 500, Seed: 3, Devices: 2, Kernels: 3, FreqMHz: 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			res, err := Generate(&buf, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := joinBytes(t, buf.Bytes(), kernelmap.New(res.Kernels...))
			if len(r.launches) != res.Launches || r.stats.IncompleteLaunches != 0 || r.stats.LaunchesWithoutAPI != 0 {
				t.Fatalf("%d launches (%+v), generated %d", len(r.launches), r.stats, res.Launches)
			}
			exec := map[string]uint64{}
			n := map[string]int{}
			for _, l := range r.launches {
				exec[l.Kernel] += l.ExecCycles
				n[l.Kernel]++
			}
			for k, v := range res.ExecCycles {
				if exec[k] != v || n[k] != res.LaunchesByName[k] {
					t.Errorf("%s: %d cycles in %d launches, generated %d in %d", k, exec[k], n[k], v, res.LaunchesByName[k])
				}
			}
			h2d, d2h := 0, 0
			for _, c := range r.copies {
				switch c.Direction {
				case H2D:
					h2d++
				case D2H:
					d2h++
				default:
					t.Errorf("unexpected copy %+v", c)
				}
				if c.Commands != 1 || c.Responses != 1 || c.CMACopies != 1 || c.Status != SeenAPI|SeenCommand|SeenResponse|SeenDispatch {
					t.Errorf("copy %+v", c)
				}
			}
			if h2d != res.H2D || d2h != res.D2H {
				t.Errorf("copies %d/%d, generated %d/%d", h2d, d2h, res.H2D, res.D2H)
			}
			if r.stats.IDWraps != res.Wraps {
				t.Errorf("id wraps %d, generated %d", r.stats.IDWraps, res.Wraps)
			}
			if r.w.Len() != 0 {
				t.Errorf("warnings %v", r.w.List())
			}
			if tt.opts.Devices == 2 {
				d := r.j.Devices()
				if len(d) != 2 || d[1].FreqMHz != 500 {
					t.Errorf("devices %+v", d)
				}
				for _, l := range r.launches {
					if l.Device != l.Stream-1 {
						t.Errorf("launch on device %d stream %d", l.Device, l.Stream)
					}
				}
			}
		})
	}
}

func TestJoinTruncated(t *testing.T) {
	var buf bytes.Buffer
	res, err := Generate(&buf, GenOptions{Ops: 50, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	r := joinBytes(t, b[:len(b)*2/3], nil)
	if len(r.launches) == 0 || len(r.launches) > res.Launches {
		t.Errorf("%d launches of %d", len(r.launches), res.Launches)
	}
	for _, l := range r.launches {
		if l.Kernel[:7] != "kernel#" {
			t.Errorf("kernel %q without a map", l.Kernel)
		}
	}
}

func TestCyclesToNS(t *testing.T) {
	tests := []struct {
		c    uint64
		f    uint32
		want int64
	}{
		{1732655, 1000, 1732655}, {1000, 500, 2000}, {3, 1500, 2}, {1 << 60, 1000, 1 << 60}, {1<<64 - 1, 1, 1<<63 - 1}, {5, 0, 0},
	}
	for _, tt := range tests {
		if got := CyclesToNS(tt.c, tt.f); got != tt.want {
			t.Errorf("CyclesToNS(%d, %d) = %d, want %d", tt.c, tt.f, got, tt.want)
		}
	}
}

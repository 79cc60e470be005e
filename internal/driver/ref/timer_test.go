package ref

import (
	"context"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

func TestTimerMatchesLaunches(t *testing.T) {
	ctx := context.Background()
	d := New(Options{})
	var tm driver.Timer = d
	if got := tm.LaunchTimings(0); len(got) != 0 {
		t.Fatalf("fresh device: %d timings", len(got))
	}
	k, err := d.LoadKernel(ctx, "uberkernel", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A launch with bad args faults (reported by Sync) but is still timed.
	for i := 0; i < 3; i++ {
		if err := d.Launch(ctx, k, nil, driver.LaunchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recs := d.Launches()
	all := tm.LaunchTimings(0)
	if len(all) != len(recs) || len(recs) != 3 {
		t.Fatalf("%d timings, %d records", len(all), len(recs))
	}
	for i, r := range recs {
		if all[i] != (driver.LaunchTiming{Kernel: r.Kernel, StartCycle: r.StartCycle, EndCycle: r.EndCycle}) {
			t.Errorf("timing %d = %+v, record %+v", i, all[i], r)
		}
	}
	if tail := tm.LaunchTimings(2); len(tail) != 1 || tail[0] != all[2] {
		t.Errorf("LaunchTimings(2) = %+v", tail)
	}
	if got := tm.LaunchTimings(5); got != nil {
		t.Errorf("LaunchTimings past the end = %+v", got)
	}
	for _, tt := range []struct{ n, want uint64 }{{0, 1000}, {1, 1001}, {4, 1001}, {65536, 1000 + 16384}} {
		if got := tm.CopyCycles(tt.n); got != tt.want {
			t.Errorf("CopyCycles(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

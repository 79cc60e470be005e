package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops/graph"
)

// TestHostMemoryJobs: the jobs of a run share one host-memory budget. A
// case over the whole budget is an input error; one that fits the budget
// but not beside a running case waits for it (it would run alone, so it
// is not refused), and runs when that case releases its share; one that
// fits beside it runs at once; a wait ends with the context.
func TestHostMemoryJobs(t *testing.T) {
	c, err := graph.ParseCaseString("MUL_MAT(type_a=f32,type_b=f32,m=1024,n=1,k=1024)")
	if err != nil {
		t.Fatal(err)
	}
	need := CaseBytes(c)
	ctx := context.Background()

	var ge *graph.Error
	if _, err := (&hostMemory{budget: need - 1, by: "allowed by --max-host-memory", freed: make(chan struct{})}).reserve(ctx, c); !errors.As(err, &ge) || !strings.Contains(err.Error(), "allowed by --max-host-memory") {
		t.Fatalf("over the budget: %v, want an input error naming the budget", err)
	}
	if release, err := (*hostMemory)(nil).reserve(ctx, c); err != nil || release == nil {
		t.Fatalf("no accounting: %v", err)
	}

	// Room for one case and a half: a second case waits, a small one
	// fits beside it.
	h := &hostMemory{budget: need + need/2, by: "available", freed: make(chan struct{})}
	waiting := make(chan struct{}, 4)
	h.onWait = func() { waiting <- struct{}{} }
	releaseA, err := h.reserve(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		release func()
		err     error
	}
	got := make(chan res, 1)
	go func() {
		r, err := h.reserve(ctx, c)
		got <- res{r, err}
	}()
	select { // B finds no room beside A
	case <-waiting:
	case r := <-got:
		t.Fatalf("B reserved beside A (err %v), want it to wait", r.err)
	}
	releaseA()
	releaseA() // twice is once
	r := <-got
	if r.err != nil {
		t.Fatalf("B after A: %v", r.err)
	}
	if h.reserved != need {
		t.Fatalf("reserved %d after A's release and B's reservation, want %d", h.reserved, need)
	}
	small, err := graph.ParseCaseString("MUL_MAT(type_a=f32,type_b=f32,m=256,n=1,k=1024)")
	if err != nil {
		t.Fatal(err)
	}
	if CaseBytes(small) > need/2 {
		t.Fatalf("the small case needs %d, more than half of %d", CaseBytes(small), need)
	}
	releaseSmall, err := h.reserve(ctx, small)
	if err != nil || len(waiting) != 0 {
		t.Fatalf("a small case beside B: %v (waited: %v)", err, len(waiting) != 0)
	}
	releaseSmall()

	// A wait ends with its context.
	cctx, cancel := context.WithCancelCause(ctx)
	go func() {
		_, err := h.reserve(cctx, c)
		got <- res{nil, err}
	}()
	<-waiting
	stop := errors.New("interrupted")
	cancel(stop)
	if r := <-got; !errors.Is(r.err, stop) {
		t.Fatalf("a canceled wait: %v, want its cause", r.err)
	}
	r.release()
	if h.reserved != 0 {
		t.Fatalf("reserved %d after every release, want 0", h.reserved)
	}
}

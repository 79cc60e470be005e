package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/ref"
	"github.com/ainekko/et/internal/ops/graph"
)

// bigInputCase is a case whose inputs take a while to generate (a
// llama-3-8B FFN weight, 58M normal values quantized to q8_0).
func bigInputCase(t *testing.T) []*Planned {
	t.Helper()
	c, err := graph.LoadBytes("big.yaml", []byte(`name: big
seed: 1
tensors:
  w: {type: q8_0, ne: [4096, 14336], init: normal(0, 0.02)}
  x: {type: f32, ne: [4096, 1], init: normal(0, 1)}
nodes:
  - {name: y, op: mul_mat, src: [w, x]}
outputs: [y]
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	planned, bad, err := PlanAll([]*graph.Case{c}, PlanOptions{}, nil)
	if err != nil || len(bad) > 0 {
		t.Fatalf("plan: %v %v", err, bad)
	}
	return planned
}

// genCtx is a context that says when input generation is under way: the
// readiness signal is generation (graph.fillLeaf) asking for its Done
// channel, so the tests need no sleep and no wall-clock bound.
type genCtx struct {
	context.Context
	once    sync.Once
	started chan struct{}
}

func newGenCtx(ctx context.Context) *genCtx {
	return &genCtx{Context: ctx, started: make(chan struct{})}
}

func (c *genCtx) Done() <-chan struct{} {
	pc := make([]uintptr, 1)
	if runtime.Callers(2, pc) == 1 {
		if f, _ := runtime.CallersFrames(pc).Next(); strings.HasSuffix(f.Function, "graph.fillLeaf") {
			c.once.Do(func() { close(c.started) })
		}
	}
	return c.Context.Done()
}

// runLogged runs planned on a reference device and says whether it got
// past input generation (it logs "running" once the inputs are bound).
func runLogged(ctx context.Context, planned []*Planned) (ran bool, err error) {
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		ran = ran || strings.HasPrefix(fmt.Sprintf(format, args...), "running ")
	}
	_, err = Run(ctx, []driver.Device{ref.New(ref.Options{})}, planned, Options{Backend: "ref", Logf: logf})
	mu.Lock()
	defer mu.Unlock()
	return ran, err
}

// hangGuard bounds a wait that only a bug makes endless.
const hangGuard = 2 * time.Minute

// TestRunInterruptedWhileGenerating: an interrupt (the run's context
// canceled) reaches input generation: generation gets the run's context
// (genCtx sees it), and canceled then, Run returns context.Canceled, which
// cmd/et reports as "interrupted", without running the case; an already
// canceled context generates nothing. That generation stops within a few
// rows of the cancel is graph's test (TestMaterializeContextCanceled).
func TestRunInterruptedWhileGenerating(t *testing.T) {
	planned := bigInputCase(t)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gc := newGenCtx(ctx)
	if _, err := runLogged(gc, planned); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled before the run: err = %v, want context.Canceled", err)
	}
	select {
	case <-gc.started:
		t.Error("canceled before the run: inputs were generated")
	default:
	}

	ctx, cancel = context.WithCancel(context.Background())
	gc = newGenCtx(ctx)
	type result struct {
		ran bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		ran, err := runLogged(gc, planned)
		done <- result{ran, err}
	}()
	select {
	case <-gc.started:
	case <-time.After(hangGuard):
		t.Fatal("input generation never started")
	}
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("canceled while generating: err = %v, want context.Canceled", r.err)
		}
		if r.ran {
			t.Error("canceled while generating: the generation ran to its end and the case ran")
		}
	case <-time.After(hangGuard):
		t.Fatal("canceled while generating: Run did not return")
	}
}

// TestRunTimeoutWhileGenerating: a timeout that ends the context while
// the inputs are generated is reported as the timeout (its cause), not as
// "context canceled" or "deadline exceeded".
func TestRunTimeoutWhileGenerating(t *testing.T) {
	planned := bigInputCase(t)
	cause := fmt.Errorf("run-op: %w after 30ms", driver.ErrTimeout)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	gc := newGenCtx(ctx)
	go func() {
		<-gc.started
		cancel(cause)
	}()
	_, err := runLogged(gc, planned)
	if !errors.Is(err, driver.ErrTimeout) || strings.Contains(err.Error(), "deadline exceeded") || strings.Contains(err.Error(), "canceled") {
		t.Fatalf("err = %v, want the timeout cause %q", err, cause)
	}
}

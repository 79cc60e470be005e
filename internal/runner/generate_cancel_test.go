package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestRunInterruptedWhileGenerating: an interrupt (the run's context
// canceled) reaches input generation: Run returns context.Canceled, which
// cmd/et reports as "interrupted", within a second of the cancel, and an
// already canceled context generates nothing.
func TestRunInterruptedWhileGenerating(t *testing.T) {
	planned := bigInputCase(t)
	dev := func() []driver.Device { return []driver.Device{ref.New(ref.Options{})} }

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if _, err := Run(ctx, dev(), planned, Options{Backend: "ref"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled before the run: err = %v, want context.Canceled", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("canceled before the run: Run took %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, dev(), planned, Options{Backend: "ref"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // generation is under way
	cancel()
	t0 = time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled while generating: err = %v, want context.Canceled", err)
		}
		if d := time.Since(t0); d > time.Second {
			t.Errorf("canceled while generating: Run returned %v after the cancel", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("canceled while generating: Run did not return within 10 s")
	}
}

// TestRunTimeoutWhileGenerating: a --timeout that fires while the inputs
// are generated is reported as the timeout (its cause), not as "context
// deadline exceeded".
func TestRunTimeoutWhileGenerating(t *testing.T) {
	planned := bigInputCase(t)
	cause := fmt.Errorf("run-op: %w after 30ms", driver.ErrTimeout)
	ctx, cancel := context.WithTimeoutCause(context.Background(), 30*time.Millisecond, cause)
	defer cancel()
	_, err := Run(ctx, []driver.Device{ref.New(ref.Options{})}, planned, Options{Backend: "ref"})
	if !errors.Is(err, driver.ErrTimeout) || strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("err = %v, want the timeout cause %q", err, cause)
	}
}

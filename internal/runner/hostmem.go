package runner

import (
	"context"
	"sync"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops/graph"
)

// hostMemory is the host memory the jobs of one run share: a budget taken
// when the run starts (MemAvailable, or --max-host-memory when smaller)
// and what the cases running now have reserved of it (CaseBytes each). A
// case that needs more than the whole budget is refused, as CheckMemory
// refuses it; one that fits the budget but not beside the cases running
// waits for them to end. So with --jobs N the cases running never need
// more than the budget together, and no case is refused that would run
// alone. A nil *hostMemory counts nothing.
type hostMemory struct {
	budget uint64 // 0: unknown (no MemAvailable, no --max-host-memory)
	by     string

	mu       sync.Mutex
	reserved uint64
	freed    chan struct{} // closed, and replaced, when a reservation ends
	// onWait, in tests, is called when a case starts waiting.
	onWait func()
}

func newHostMemory(max uint64) *hostMemory {
	budget, by := infile.MemoryBudget(max)
	return &hostMemory{budget: budget, by: by, freed: make(chan struct{})}
}

// reserve admits case c: an input error when it needs more than the
// budget, else it waits until c fits beside the cases running (ctx ends
// the wait with its error) and reserves c's bytes; release gives them
// back (once).
func (h *hostMemory) reserve(ctx context.Context, c *graph.Case) (release func(), err error) {
	if h == nil || h.budget == 0 {
		return func() {}, nil
	}
	if err := checkBudget(c, h.budget, h.by); err != nil {
		return nil, err
	}
	need := CaseBytes(c)
	for {
		h.mu.Lock()
		if h.reserved == 0 || h.reserved+need <= h.budget {
			h.reserved += need
			h.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { h.release(need) }) }, nil
		}
		freed := h.freed
		h.mu.Unlock()
		if h.onWait != nil {
			h.onWait()
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (h *hostMemory) release(n uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reserved -= n
	close(h.freed)
	h.freed = make(chan struct{})
}

package etrt

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ainekko/et/internal/driver"
)

var _ driver.Profiler = (*Proxy)(nil)

// StartProfile implements driver.Profiler: the worker's runtime starts its
// profiler, writing into dir (made absolute here: the worker runs in its
// run directory).
func (p *Proxy) StartProfile(ctx context.Context, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("etrt worker: profile directory: %w", err)
	}
	_, err = p.call(ctx, request{Op: opProfileStart, Dir: abs})
	return err
}

// StopProfile implements driver.Profiler: the worker waits for the
// launched work, stops its runtime's profiler and completes the trace.
func (p *Proxy) StopProfile(ctx context.Context) error {
	_, err := p.call(ctx, request{Op: opProfileStop})
	return err
}

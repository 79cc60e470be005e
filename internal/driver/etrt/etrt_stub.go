//go:build !cgo || (!etrt && !etrtfake)

package etrt

import (
	"context"
	"fmt"

	"github.com/ainekko/et/internal/driver"
)

// Built reports whether this binary has a runtime shim (the etrt or
// etrtfake build tag, with cgo).
const Built = false

// Open opens a sysemu or PCIe device in this process. This binary has no
// runtime shim: it returns driver.ErrNotBuilt.
func Open(ctx context.Context, req OpenRequest) (driver.Device, error) {
	return nil, fmt.Errorf("%s backend: %w", req.Backend, driver.ErrNotBuilt)
}

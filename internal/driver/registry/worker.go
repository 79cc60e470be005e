package registry

import (
	"context"
	"fmt"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
)

// WorkerCommand is the hidden et subcommand a worker process runs.
const WorkerCommand = etrt.WorkerCommand

// ServeWorker is the body of "et __worker": the child process that holds
// a device for its parent et (Open, through etrt.OpenWorker), so that a
// native call that hangs is killed with the process rather than leaked.
// backend, when not "", is the backend the worker was started for: the
// parent's open request must agree with it.
func ServeWorker(ctx context.Context, backend string) error {
	return etrt.ServeWorker(ctx, func(ctx context.Context, req etrt.OpenRequest) (driver.Device, error) {
		if backend != "" && req.Backend != backend {
			return nil, fmt.Errorf("worker started for backend %s was asked to open %s", backend, req.Backend)
		}
		return openInProcess(ctx, req)
	})
}

// openInProcess opens the device a worker serves: the reference device,
// or sysemu/pcie through the runtime shim (driver.ErrNotBuilt without it).
func openInProcess(ctx context.Context, req etrt.OpenRequest) (driver.Device, error) {
	if req.Backend == string(driver.KindRef) {
		return openRef(0, nil)
	}
	return etrt.Open(ctx, req)
}

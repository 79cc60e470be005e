//go:build !linux || !(amd64 || arm64 || riscv64)

package pcie

import (
	"fmt"

	"github.com/ainekko/et/internal/driver"
)

// OSNodes returns a Nodes whose Open always fails: the ET driver and its
// ioctl numbers exist only on Linux (amd64, arm64, riscv64).
func OSNodes() Nodes { return noNodes{} }

type noNodes struct{}

func (noNodes) Open(path string) (Node, error) {
	return nil, fmt.Errorf("open %s: probing ET device nodes needs Linux on amd64, arm64 or riscv64: %w", path, driver.ErrUnavailable)
}

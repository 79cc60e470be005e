//go:build !linux

package etrt

import (
	"os"
	"os/exec"
)

// setProcAttr does nothing here: process groups are handled on Linux only.
func setProcAttr(cmd *exec.Cmd) {}

// killGroup kills the worker.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// interruptGroup interrupts the worker.
func interruptGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Signal(os.Interrupt)
	}
}

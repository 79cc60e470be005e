//go:build linux

package etrt

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the worker in its own process group (so a terminal's
// Ctrl-C reaches et, which forwards it) and kills it if et dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the worker's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// interruptGroup sends SIGINT to the worker's process group.
func interruptGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	}
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver/registry"
)

func init() {
	extraCommands = append(extraCommands, func(f *factory) *cobra.Command { return newWorkerCmd(f) })
}

// newWorkerCmd is the hidden "et __worker": the child process that holds a
// device for its parent et (registry.ServeWorker), so that a native call that
// hangs (sys_emu can wait forever for its firmware) is killed with the
// process rather than leaked. The protocol runs on fds 3 and 4; stdin is
// /dev/null. --backend only documents the backend in ps output: the
// parent's open request says which device to open, and must agree.
func newWorkerCmd(f *factory) *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use:    registry.WorkerCommand,
		Short:  "Serve a device to the et process that started this one (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return registry.ServeWorker(cmd.Context(), backend)
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "the backend the parent asked for: {ref|sysemu|pcie}")
	return cmd
}

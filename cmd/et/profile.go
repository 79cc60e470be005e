package main

import "github.com/spf13/cobra"

func newProfileCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Reports, exports and regression verdicts from ET runtime traces",
		Args:  cobra.NoArgs,
	}
	return cmd
}

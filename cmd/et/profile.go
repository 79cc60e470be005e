package main

import "github.com/spf13/cobra"

// profileSubcommands are the `et profile` subcommands other than report;
// their files register them from init (export, diff).
var profileSubcommands []func(*factory) *cobra.Command

func newProfileCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Reports, exports and regression verdicts from ET runtime traces",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newProfileReportCmd(f, nil))
	for _, c := range profileSubcommands {
		cmd.AddCommand(c(f))
	}
	return cmd
}

package main

import "github.com/spf13/cobra"

// profileSubcommands are the `et profile` subcommands other than report;
// their files register them from init (export, diff).
var profileSubcommands []func(*factory) *cobra.Command

func newProfileCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Reports, exports and regression verdicts from ET runtime traces",
		Example: `  $ et profile report trace/et_runtime_trace.json
  $ et profile export trace/et_runtime_trace.json --format chrome -O trace.perfetto.json
  $ et profile diff base=old/et_runtime_trace.json new=new/et_runtime_trace.json`,
		RunE: groupRunE,
	}
	cmd.AddCommand(newProfileReportCmd(f, nil))
	for _, c := range profileSubcommands {
		cmd.AddCommand(c(f))
	}
	return cmd
}

// groupRunE is the RunE of a command that only groups subcommands: with
// no argument it shows the help; an unknown subcommand is a usage error
// (cobra alone would print the help and exit 0).
func groupRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
}

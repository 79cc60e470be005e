package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
)

// checkSysemuOptions is a placeholder until the command lands.
type checkSysemuOptions struct{}

func newCheckSysemuCmd(f *factory, runF func(context.Context, *checkSysemuOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:    "check-sysemu",
		Short:  "Not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("check-sysemu: not implemented yet")
		},
	}
}

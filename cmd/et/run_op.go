package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
)

// runOpOptions is a placeholder until the command lands.
type runOpOptions struct{}

func newRunOpCmd(f *factory, runF func(context.Context, *runOpOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:    "run-op",
		Short:  "Not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("run-op: not implemented yet")
		},
	}
}

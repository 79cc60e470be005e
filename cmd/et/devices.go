package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
)

// devicesOptions is a placeholder until the command lands.
type devicesOptions struct{}

func newDevicesCmd(f *factory, runF func(context.Context, *devicesOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:    "devices",
		Short:  "Not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("devices: not implemented yet")
		},
	}
}

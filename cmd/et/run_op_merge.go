package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/outfile"
	"github.com/ainekko/et/internal/runner"
)

type runOpMergeOptions struct {
	Files []string
	JUnit string
}

// newRunOpMergeCmd is et run-op merge: it lives under run-op because it
// reads and writes run-op's own report (et.run-op/v1) and takes run-op's
// output flags (-o, --junit); the shards are run-op runs.
func newRunOpMergeCmd(f *factory, runF func(context.Context, *runOpMergeOptions) error) *cobra.Command {
	opts := &runOpMergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge <shard.json>... [--junit <file>]",
		Short: "Join the JSON reports of a sharded run-op (--shard I/N) into one",
		Long: `Join the -o json reports of every shard of one et run-op --shard I/N run into
the report one unsharded run of the same cases gives: the same schema
(et.run-op/v1, without the shard key), the cases in the unsharded order,
in any output format (-o markdown for a CI summary), and with --junit the
same JUnit file.

Every shard 1..N must be given once, all from the same cases (their
cases_digest), backend and numerics; the files may be in any order.

Exit status: as the unsharded run: 0 all outputs pass, 1 any FAIL, XPASS,
kernel fault or ABI mismatch, 2 a case no shard could run (listed in the
shards' shard.errors), or a bad shard file, a shard missing or given twice
(a one-line error naming the file), 5 an output file could not be written.`,
		Example: `  $ et run-op -f testcases/ --shard 1/2 -o json > shard-1.json
  $ et run-op -f testcases/ --shard 2/2 -o json > shard-2.json
  $ et run-op merge shard-*.json --junit results.xml -o markdown > summary.md`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if opts.JUnit != "" {
				if err := checkOutputPaths(&runOpOptions{JUnit: opts.JUnit}); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runOpMergeRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.JUnit, "junit", "", "also write the merged JUnit XML report to `file`")
	return cmd
}

func runOpMergeRun(ctx context.Context, f *factory, opts *runOpMergeOptions) error {
	doc, shards, errs, err := runner.MergeFiles(ctx, opts.Files)
	if err != nil {
		return err
	}
	f.logf("merged %d shard(s): %d output(s)", shards, len(doc.Results))
	for _, e := range errs {
		fmt.Fprintf(f.IO.ErrOut, "et: %s\n", e)
	}
	ctx = outfile.WithInputs(ctx, opts.Files...)
	var lateErr error
	if opts.JUnit != "" {
		var b []byte
		if b, lateErr = runner.JUnit(doc); lateErr == nil {
			lateErr = outfile.WriteFileContext(ctx, opts.JUnit, b)
		}
	}
	if err := f.render(runOpDocument(*doc, f.styles())); err != nil {
		return err
	}
	switch {
	case lateErr != nil:
		return lateErr
	case len(errs) > 0:
		return inputErrorf("%d case(s) could not be run in the shards (errors above)", len(errs))
	case doc.Failed():
		return errSilent
	}
	return nil
}

package main

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/outfile"
	"github.com/ainekko/et/internal/runner"
)

// Environment variables of --shard for a Kubernetes Indexed Job: the pod's
// JOB_COMPLETION_INDEX (0-based, set by Kubernetes) is the shard, of
// ET_SHARD_COUNT (set in the Job's template: its completions).
const (
	envShardIndex = "JOB_COMPLETION_INDEX"
	envShardCount = "ET_SHARD_COUNT"
)

// shardOptions is --shard I/N (et run-op, et ops explain): run or explain
// only shard I of N of the cases, after the filters.
type shardOptions struct {
	Shard string
	// shard is the resolved shard (nil: not sharded).
	shard *runner.Shard
}

func addShardFlag(cmd *cobra.Command, s *shardOptions) {
	cmd.Flags().StringVar(&s.Shard, "shard", "", "run only shard `I/N` of the cases (1 <= I <= N; by a hash of each case's key, so the same on every machine); "+
		"without it, $"+envShardIndex+" (from 0) of $"+envShardCount+" when that is set")
}

// resolve reads --shard, or the Indexed Job's environment when
// ET_SHARD_COUNT is set (--shard wins). Bad values are usage errors.
func (s *shardOptions) resolve(getenv func(string) string) error {
	if s.Shard != "" {
		sh, err := runner.ParseShard(s.Shard)
		if err != nil {
			return usageErrorf("--shard: %v", err.(*runner.ShardError).Msg+" (got "+s.Shard+")")
		}
		s.shard = &sh
		return nil
	}
	count := getenv(envShardCount)
	if count == "" {
		return nil
	}
	index := getenv(envShardIndex)
	if index == "" {
		return usageErrorf("$%s=%s is set but $%s is not: the shard index comes from an Indexed Job's %s (or give --shard I/N)",
			envShardCount, count, envShardIndex, envShardIndex)
	}
	sh, err := runner.ShardFromIndex(index, count, "$"+envShardIndex+"="+index+" of $"+envShardCount+"="+count)
	if err != nil {
		se := err.(*runner.ShardError)
		return usageErrorf("%s: %s", se.Value, se.Msg)
	}
	s.shard = &sh
	return nil
}

// renderRunOp writes a report that ran nothing (an empty shard): the
// JUnit file if asked for, the report, then the bad cases' error.
func renderRunOp(ctx context.Context, f *factory, opts *runOpOptions, doc runner.Report, bad *badCases) error {
	if opts.JUnit != "" {
		b, err := runner.JUnit(&doc)
		if err == nil {
			err = outfile.WriteFileContext(ctx, opts.JUnit, b)
		}
		if err != nil {
			return err
		}
	}
	if err := f.render(runOpDocument(doc, f.styles())); err != nil {
		return err
	}
	return bad.err()
}

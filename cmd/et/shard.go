package main

import (
	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/graph"
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
	// cases are the shard's cases, info its part of the report.
	cases []*graph.Case
	info  *runner.ShardInfo
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

// apply keeps the shard's cases (all of them when not sharded).
func (s *shardOptions) apply(cases []*graph.Case) []*graph.Case {
	if s.shard == nil {
		return cases
	}
	s.cases, s.info = s.shard.Select(cases)
	return s.cases
}

// logf says, with -v, which part of the run this is.
func (s *shardOptions) log(f *factory) {
	if s.info != nil {
		f.logf("shard %s: %d of %d cases", s.shard, len(s.cases), s.info.CasesTotal)
	}
}

// report is the report's shard key: what each case gave to the run and
// the cases that could not be run (nil when not sharded).
func (s *shardOptions) report(planned []*runner.Planned, spans []runner.Span, bad *badCases) *runner.ShardInfo {
	if s.info == nil {
		return nil
	}
	s.info.Fill(s.cases, planned, spans)
	s.info.Errors = nil
	for _, e := range bad.errs {
		s.info.Errors = append(s.info.Errors, oneLine(e.Error()))
	}
	return s.info
}

// emptyShardReport is the report of a shard without cases: nothing runs,
// no device is opened (booting an emulator for nothing), and the numerics
// are those the backend would give.
func emptyShardReport(backend string) runner.Report {
	numerics := "device"
	if !registry.Native(backend) {
		numerics = "reference"
	}
	return runner.Report{Schema: runner.ReportSchema, Backend: backend, Numerics: numerics, Results: []runner.Result{}}
}

// renderRunOp writes a report that ran nothing (an empty shard): the
// JUnit file if asked for, the report, then the bad cases' error.
func renderRunOp(f *factory, opts *runOpOptions, doc runner.Report, bad *badCases) error {
	if opts.JUnit != "" {
		b, err := runner.JUnit(&doc)
		if err == nil {
			err = outfile.WriteFile(opts.JUnit, b)
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

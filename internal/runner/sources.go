package runner

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/expect"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/testfile"
)

// Sources name the cases of a run the ways et run-op, et ops explain and
// et ops support take them: YAML case files and directories (-f), one op
// by name with its sources and parameters (--src, --param) or as a
// test-backend-ops case string, case strings (et ops support's
// arguments), llama.cpp's exported graph ops (--test-file), and the
// test-backend-ops filters --op (its -o) and -p/--params (its -p).
type Sources struct {
	Files []string
	// Op is an op name (with Srcs and Params) or a case string "OP(k=v,...)".
	Op     string
	Srcs   []string
	Params []string
	// Cases are case strings, each a case (a bad one is a bad case).
	Cases []string
	// CaseFiles are plain files of case strings (--cases), one per line;
	// blank lines and lines starting with # are skipped.
	CaseFiles []string
	TestFiles []string
	// OpsFilter is --op: op names or full case strings, comma-separated.
	OpsFilter string
	// ParamsFilter is -p/--params: a regular expression on the displayed
	// parameters.
	ParamsFilter string
}

// LoadCases reads the cases s names, in this order: the op, the case
// strings, the case-string files, the -f files (a directory gives its *.yaml files, sorted), the
// test files; then it keeps the cases that pass the filters. A file that
// cannot be read or parsed, or a bad line of a test file, is returned in
// bad (input errors, each naming its file) and the others are still
// loaded; so is a bad case string of Cases. err is an error that stops
// everything: a bad Op, a bad filter, an interrupt, or no case left by
// the filters. m is the ABI that test files are read with.
//
// Inputs may be FIFOs or devices: a named file is read with a bound and
// ends with ctx (infile), and a *.yaml of a directory that is not a
// regular file is refused without being opened.
func LoadCases(ctx context.Context, s Sources, m *abi.Manifest) (cases []*graph.Case, bad []error, err error) {
	bad, err = eachCase(ctx, s, m, func(c *graph.Case) error {
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return cases, bad, nil
}

// eachCase is LoadCases one case at a time: it calls fn, in LoadCases'
// order, on each case that passes the filters, and a case string is
// parsed only when fn is done with the one before, so that a caller that
// keeps only a verdict (Support) never holds all the cases. An error of
// fn stops it.
func eachCase(ctx context.Context, s Sources, m *abi.Manifest, fn func(*graph.Case) error) (bad []error, err error) {
	filter, err := graph.NewFilter(s.OpsFilter, s.ParamsFilter)
	if err != nil {
		return nil, err
	}
	seen, kept := 0, 0
	each := func(cs ...*graph.Case) error {
		for _, c := range cs {
			if err := ctx.Err(); err != nil {
				return err
			}
			seen++
			if filter.Match(c) {
				kept++
				if err := fn(c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch {
	case strings.Contains(s.Op, "("):
		c, err := graph.ParseCaseString(s.Op)
		if err != nil {
			return nil, err
		}
		if err := each(c); err != nil {
			return nil, err
		}
	case s.Op != "":
		c, err := graph.FromFlags(s.Op, s.Srcs, s.Params)
		if err != nil {
			return nil, err
		}
		if err := each(c); err != nil {
			return nil, err
		}
	}
	for _, cs := range s.Cases {
		c, err := graph.ParseCaseString(cs)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if err := each(c); err != nil {
			return nil, err
		}
	}
	for _, path := range s.CaseFiles {
		b, err := readCaseFile(ctx, path, "--cases")
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			bad = append(bad, err)
			continue
		}
		cs, errs := ParseCaseLines(path, b)
		if len(cs) == 0 && len(errs) == 0 {
			errs = append(errs, &graph.Error{File: path, Msg: "no case strings in this file"})
		}
		bad = append(bad, errs...)
		if err := each(cs...); err != nil {
			return nil, err
		}
	}
	fc, fb, err := loadFiles(ctx, s.Files)
	if err != nil {
		return nil, err
	}
	bad = append(bad, fb...)
	if err := each(fc...); err != nil {
		return nil, err
	}
	for _, path := range s.TestFiles {
		b, err := readCaseFile(ctx, path, "--test-file")
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			bad = append(bad, err)
			continue
		}
		cs, errs := testfile.Parse(path, b, m)
		if len(cs) == 0 && len(errs) == 0 {
			errs = append(errs, &graph.Error{File: path, Msg: "no ops in this test file"})
		}
		bad = append(bad, errs...)
		if err := each(cs...); err != nil {
			return nil, err
		}
	}
	if kept == 0 && seen > 0 {
		return nil, infile.Errorf("no case matches --op %q --params %q (of %d)", s.OpsFilter, s.ParamsFilter, seen)
	}
	return bad, nil
}

// readCaseFile reads a file of cases one per line (--test-file,
// --cases: flag names the flag): a directory or a file that cannot be read
// is an input error naming it.
func readCaseFile(ctx context.Context, path, flag string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &graph.Error{File: path, Msg: "cannot read: is a directory (" + flag + " takes a file)"}
	}
	b, err := infile.ReadFile(ctx, path, infile.MaxText)
	if err != nil {
		return nil, &graph.Error{File: path, Msg: "cannot read: " + infile.ErrText(err)}
	}
	return b, nil
}

// ParseCaseLines reads a plain file of test-backend-ops case strings
// (et run-op --cases): one per line, surrounding space trimmed, blank
// lines and lines starting with # skipped. Each case is named by its case
// string, as test-backend-ops names it; a bad line is an error naming
// file:line, and the other lines are still read.
func ParseCaseLines(file string, b []byte) (cases []*graph.Case, bad []error) {
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := graph.ParseCaseString(line)
		if err != nil {
			bad = append(bad, &graph.Error{File: file, Line: i + 1, Msg: err.Error()})
			continue
		}
		cases = append(cases, c)
	}
	return cases, bad
}

// loadFiles reads the YAML case files of -f: each file, or each *.yaml of
// a directory. A file that cannot be read or parsed is returned in bad
// (input errors, one per file) and the others are still loaded: one bad
// file of a directory does not stop it.
func loadFiles(ctx context.Context, paths []string) (cases []*graph.Case, bad []error, err error) {
	for _, path := range paths {
		st, err := os.Stat(path)
		if err != nil {
			bad = append(bad, &graph.Error{File: path, Msg: "cannot read: " + infile.ErrText(err)})
			continue
		}
		files := []string{path}
		if st.IsDir() {
			if files, err = filepath.Glob(filepath.Join(path, "*.yaml")); err != nil {
				return nil, nil, err
			}
			sort.Strings(files)
			if len(files) == 0 {
				bad = append(bad, &graph.Error{File: path, Msg: "no *.yaml case files in this directory"})
				continue
			}
		}
		for _, file := range files {
			if st.IsDir() && !infile.IsRegular(file) {
				// Named *.yaml in a directory, yet a FIFO, device or
				// directory: not opened, as it could block or never end.
				bad = append(bad, &graph.Error{File: file, Msg: "cannot read: not a regular file"})
				continue
			}
			b, err := infile.ReadFile(ctx, file, infile.MaxText)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				bad = append(bad, &graph.Error{File: file, Msg: "cannot read: " + infile.ErrText(err)})
				continue
			}
			c, err := graph.LoadBytes(file, b, filepath.Dir(file))
			if err != nil {
				bad = append(bad, err)
				continue
			}
			cases = append(cases, c)
		}
	}
	return cases, bad, nil
}

// ParseSeed reads a seed as a case file's seed: does (0x2a, 0o52, 42;
// not -1, 1.5 or 2^64): et run-op --seed.
func ParseSeed(text string) (uint64, error) { return graph.ParseSeed(text) }

// PrepareOptions say which cases a run has and how they are planned.
type PrepareOptions struct {
	Sources
	Plan PlanOptions
	// Seed, when not nil, overrides every case's seed (--seed).
	Seed *uint64
	// Shard, when not nil, keeps the shard's cases (after the filters).
	Shard *Shard
	// ExpectedFailures is --expected-failures: a file of known defects
	// (ops/expect), read before the cases.
	ExpectedFailures string
	// Logf reports progress (nil: quiet).
	Logf func(format string, args ...any)
}

// Prepared are the planned cases of a run, or of an explanation: what
// et run-op runs and et ops explain shows.
type Prepared struct {
	Planned []*Planned
	// Bad are the cases that could not be loaded or planned, in the
	// order found (input errors): the others are planned.
	Bad []error
	// Total counts the cases (of the shard) and the files that gave
	// none: what Bad is a part of.
	Total int
	// Shard is the shard's part of the report (nil when not sharded):
	// ShardReport completes it.
	Shard      *ShardInfo
	shardCases []*graph.Case
	// Expected are the expected failures (nil: none).
	Expected *expect.Set
}

// Prepare reads the expected failures, loads the cases (LoadCases), keeps
// the shard's, and plans them without data (PlanAll).
func Prepare(ctx context.Context, o PrepareOptions) (*Prepared, error) {
	p := &Prepared{}
	if o.ExpectedFailures != "" {
		var err error
		if p.Expected, err = expect.Load(o.ExpectedFailures); err != nil {
			return nil, err
		}
	}
	cases, bad, err := LoadCases(ctx, o.Sources, o.Plan.manifest())
	if err != nil {
		return nil, err
	}
	if o.Shard != nil {
		p.shardCases, p.Shard = o.Shard.Select(cases)
		cases = p.shardCases
		if o.Logf != nil {
			o.Logf("shard %s: %d of %d cases", o.Shard, len(cases), p.Shard.CasesTotal)
		}
	}
	p.Total = len(cases) + len(bad)
	planned, badPlans, err := PlanAll(cases, o.Plan, o.Seed)
	if err != nil {
		return nil, err
	}
	p.Planned, p.Bad = planned, append(bad, badPlans...)
	return p, nil
}

// ShardReport is the report's shard key (nil when not sharded): what each
// case gave to the run (spans, Outcome.Spans; nil when nothing ran) and
// errs, the cases that could not be run, one line each.
func (p *Prepared) ShardReport(spans []Span, errs []string) *ShardInfo {
	if p.Shard == nil {
		return nil
	}
	p.Shard.Fill(p.shardCases, p.Planned, spans)
	p.Shard.Errors = errs
	return p.Shard
}

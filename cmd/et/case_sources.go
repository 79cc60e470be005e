package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/testfile"
)

// caseSources are the flags that add and select cases the way
// test-backend-ops does, shared by et run-op and et ops explain:
// --test-file (llama.cpp's exported graph ops), --op (its -o: op names or
// full case strings) and -p/--params (its -p: a regular expression on the
// displayed parameters).
type caseSources struct {
	TestFiles []string
	OpsFilter string
	Params    string
}

func addCaseSourceFlags(cmd *cobra.Command, s *caseSources) {
	fl := cmd.Flags()
	fl.StringArrayVar(&s.TestFiles, "test-file", nil, "test `file` of llama.cpp's exported graph ops (test-export-graph-ops; test-backend-ops --test-file), one case per line (repeatable)")
	fl.StringVar(&s.OpsFilter, "op", "", "only the cases of these ops: `OP[,OP]`, each an op name (MUL_MAT, SILU) or a full case string (test-backend-ops -o)")
	fl.StringVarP(&s.Params, "params", "p", "", "only the cases whose displayed parameters match this `regex` (test-backend-ops -p)")
}

// load adds the cases of the test files to cases (a bad line goes to
// bad, as file:line, and the other lines still give their cases), then
// keeps the cases that pass --op and --params. No case left is an input
// error.
func (s *caseSources) load(ctx context.Context, m *abi.Manifest, cases []*graph.Case, bad []error) ([]*graph.Case, []error, error) {
	filter, err := graph.NewFilter(s.OpsFilter, s.Params)
	if err != nil {
		return nil, nil, err
	}
	for _, path := range s.TestFiles {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			bad = append(bad, &graph.Error{File: path, Msg: "cannot read: is a directory (--test-file takes a file)"})
			continue
		}
		b, err := infile.ReadFile(ctx, path, infile.MaxText)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			bad = append(bad, &graph.Error{File: path, Msg: "cannot read: " + infile.ErrText(err)})
			continue
		}
		cs, errs := testfile.Parse(path, b, m)
		if len(cs) == 0 && len(errs) == 0 {
			errs = append(errs, &graph.Error{File: path, Msg: "no ops in this test file"})
		}
		cases = append(cases, cs...)
		bad = append(bad, errs...)
	}
	if filter.Empty() {
		return cases, bad, nil
	}
	kept := filter.Apply(cases)
	if len(kept) == 0 && len(cases) > 0 {
		return nil, nil, inputErrorf("no case matches --op %q --params %q (of %d)", s.OpsFilter, s.Params, len(cases))
	}
	return kept, bad, nil
}

// loadRunOpCases reads the cases named by -f, the op flags or a case string.
// A case file that cannot be read or parsed is returned in bad (input
// errors, one per file) and the others are still loaded: one bad file of a
// directory does not stop it. err is an error that stops everything.
func loadRunOpCases(ctx context.Context, opts *runOpOptions) (cases []*graph.Case, bad []error, err error) {
	switch {
	case strings.Contains(opts.Op, "("):
		c, err := graph.ParseCaseString(opts.Op)
		if err != nil {
			return nil, nil, err
		}
		return []*graph.Case{c}, nil, nil
	case opts.Op != "":
		c, err := graph.FromFlags(opts.Op, opts.Srcs, opts.Params)
		if err != nil {
			return nil, nil, err
		}
		return []*graph.Case{c}, nil, nil
	}
	for _, path := range opts.Files {
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

// badCases reports the case files that could not be loaded or prepared:
// each one on stderr as it is found, then, once the good cases have run,
// one error (exit 2). Alone, a single bad case is returned as it is.
type badCases struct {
	errs  []error
	total int
	// planOnly: the command only plans (ops explain, ops support).
	planOnly bool
}

func (b *badCases) verb() string {
	if b.planOnly {
		return "planned"
	}
	return "run"
}

func (b *badCases) add(f *factory, err error) {
	b.errs = append(b.errs, err)
	if b.total > 1 {
		fmt.Fprintf(f.IO.ErrOut, "et: %s\n", oneLine(err.Error()))
	}
}

// err is nil without bad cases.
func (b *badCases) err() error {
	switch {
	case len(b.errs) == 0:
		return nil
	case b.total <= 1:
		return b.errs[0]
	}
	return inputErrorf("%d of %d cases could not be %s (errors above)", len(b.errs), b.total, b.verb())
}

// opArgs checks the ways run-op and ops explain name their work: -f files,
// or one positional op name (with --src/--param) or case string. It
// returns the op ("" with -f).
func opArgs(args, files, srcs, params []string, cmd string) (string, error) {
	if len(args) > 1 {
		return "", usageErrorf("expected at most one op or case string, got %d arguments", len(args))
	}
	op := ""
	if len(args) == 1 {
		op = args[0]
	}
	if op == "" && len(files) == 0 {
		return "", usageErrorf("nothing to run: give -f FILE|DIR, --test-file FILE, an op name with --src, or a case string")
	}
	if op != "" && len(files) > 0 {
		return "", usageErrorf("give either -f or an op, not both (--test-file counts as -f)")
	}
	if (len(srcs) > 0 || len(params) > 0) && (op == "" || strings.Contains(op, "(")) {
		return "", usageErrorf("--src and --param go with an op name (%s OP --src ...)", cmd)
	}
	return op, nil
}

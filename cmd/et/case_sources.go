package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

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
		b, err := readInput(ctx, path, maxTextInput)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			bad = append(bad, &graph.Error{File: path, Msg: "cannot read: " + errText(err)})
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

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/runner"
)

// caseSources are the flags that add and select cases the way
// test-backend-ops does, shared by et run-op and et ops explain:
// --test-file (llama.cpp's exported graph ops), --op (its -o: op names or
// full case strings) and -p/--params (its -p: a regular expression on the
// displayed parameters).
type caseSources struct {
	TestFiles []string
	// CaseFiles are --cases: plain files of case strings, one per line.
	CaseFiles []string
	// CaseArgs are the positional case strings when there are several
	// (one is the op, as an op name would be).
	CaseArgs  []string
	OpsFilter string
	Params    string
}

func addCaseSourceFlags(cmd *cobra.Command, s *caseSources) {
	fl := cmd.Flags()
	fl.StringArrayVar(&s.TestFiles, "test-file", nil, "test `file` of llama.cpp's exported graph ops (test-export-graph-ops; test-backend-ops --test-file), one case per line (repeatable)")
	fl.StringArrayVar(&s.CaseFiles, "cases", nil, "plain `file` of test-backend-ops case strings, one per line, # comments (repeatable)")
	fl.StringVar(&s.OpsFilter, "op", "", "only the cases of these ops: `OP[,OP]`, each an op name (MUL_MAT, SILU) or a full case string (test-backend-ops -o)")
	fl.StringVarP(&s.Params, "params", "p", "", "only the cases whose displayed parameters match this `regex` (test-backend-ops -p)")
}

// sources are the runner's case sources: these flags, with -f files and
// a positional op (with --src and --param) or case strings.
func (s *caseSources) sources(files []string, op string, srcs, params, cases []string) runner.Sources {
	return runner.Sources{Files: files, Op: op, Srcs: srcs, Params: params, Cases: append(s.CaseArgs, cases...),
		CaseFiles: s.CaseFiles, TestFiles: s.TestFiles, OpsFilter: s.OpsFilter, ParamsFilter: s.Params}
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

// lines are the bad cases' errors, one line each (a shard report's
// errors).
func (b *badCases) lines() []string {
	var l []string
	for _, e := range b.errs {
		l = append(l, oneLine(e.Error()))
	}
	return l
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

// opArgs checks the ways run-op and ops explain name their work: -f files
// (--test-file and --cases count as files), or one positional op name
// (with --src/--param), or one or more case strings (several go to
// s.CaseArgs). It returns the op ("" with files or several case strings).
func opArgs(args []string, s *caseSources, files, srcs, params []string, cmd string) (string, error) {
	files = append(append(append([]string(nil), files...), s.TestFiles...), s.CaseFiles...)
	if len(args) > 1 {
		for _, a := range args {
			if !strings.Contains(a, "(") {
				return "", usageErrorf("%q is not a case string OP(k=v,...): several arguments must all be case strings (one op by name goes alone, with --src)", a)
			}
		}
	}
	op := ""
	if len(args) == 1 {
		op = args[0]
	}
	if len(args) == 0 && len(files) == 0 {
		return "", usageErrorf("nothing to run: give -f FILE|DIR, --test-file FILE, --cases FILE, an op name with --src, or case strings")
	}
	if len(args) > 0 && len(files) > 0 {
		return "", usageErrorf("give either files (-f, --test-file, --cases) or an op or case strings, not both")
	}
	if (len(srcs) > 0 || len(params) > 0) && (op == "" || strings.Contains(op, "(")) {
		return "", usageErrorf("--src and --param go with an op name (%s OP --src ...)", cmd)
	}
	if len(args) > 1 {
		s.CaseArgs = args
	}
	return op, nil
}

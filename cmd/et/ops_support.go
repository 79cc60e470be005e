package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/runner"
)

type opsSupportOptions struct {
	Cases []string // positional case strings
	Files []string
	ABI   string
	caseSources
}

func newOpsSupportCmd(f *factory, runF func(context.Context, *opsSupportOptions) error) *cobra.Command {
	opts := &opsSupportOptions{}
	cmd := &cobra.Command{
		Use:   "support ['<OP(k=v,...)>' ...] [-f <file>] [--test-file <file>]",
		Short: "ggml-et's supports_op per case, as test-backend-ops support does",
		Long: `Judge cases with ggml-et's supports_op, as test-backend-ops' support
mode does: one verdict per case, of its output node. Without cases, every
eval case of test-backend-ops at the ggml version of et's built-in ABI
manifest (19,726 case strings) is judged; give case strings, -f case files
or --test-file (llama.cpp's exported graph ops) to judge those instead, and
--op / -p to select as test-backend-ops' -o and -p do.

-o csv writes test-backend-ops' CSV column for column (backend_name,
op_name, op_params, test_mode, supported, error_message, backend_reg_name)
with the backend named ET, so llama.cpp's scripts/create_ops_docs.py renders
ggml-et's column from et. The table form adds the failed conditions. Judging
every case takes a while: on a terminal, stderr says so meanwhile.

Exit status: 0 whether or not the cases are supported, 2 for a bad case or
flags (the good cases are still judged).`,
		Example: `  $ et ops support -o csv > docs/ops/ET.csv
  $ et ops support --op MUL_MAT -p 'type_a=q8_0'
  $ et ops support 'RMS_NORM(type=f32,ne=[100,4,1,1])' 'SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1)'
  $ et ops support --test-file testcases/test-files/llama_layer_small.txt -o csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if !strings.Contains(a, "(") {
					return usageErrorf("%q is not a case string OP(k=v,...) (for an op by name, use et ops explain OP --src ...)", a)
				}
			}
			opts.Cases = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return opsSupportRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Files, "file", "f", nil, "YAML case `file` or directory (repeatable)")
	fl.StringVar(&opts.ABI, "abi", "", "ABI manifest YAML `file` for another ggml version (default: the built-in one)")
	addCaseSourceFlags(cmd, &opts.caseSources)
	return cmd
}

// opsSupportDoc is et ops support's document (et.ops-support/v1): one row
// per case, the columns of test-backend-ops' support CSV.
type opsSupportDoc struct {
	Schema string          `json:"schema"`
	Rows   []opsSupportRow `json:"rows"`
	// why is, per row, the failed conditions (the table form's last
	// column; test-backend-ops' CSV has none).
	why []string
}

// csvTables is test-backend-ops' support CSV: one plain table.
func (d opsSupportDoc) csvTables() []csvTable { return []csvTable{{Rows: d.Rows}} }

// opsSupportRow is one case as test-backend-ops' support mode writes it.
type opsSupportRow struct {
	BackendName    string `json:"backend_name"`
	OpName         string `json:"op_name"`
	OpParams       string `json:"op_params"`
	TestMode       string `json:"test_mode"`
	Supported      string `json:"supported"`
	ErrorMessage   string `json:"error_message"`
	BackendRegName string `json:"backend_reg_name"`
}

// opsSupportBackend is ggml-et's backend name in test-backend-ops.
const opsSupportBackend = "ET"

func opsSupportRun(ctx context.Context, f *factory, opts *opsSupportOptions) error {
	m, err := loadManifest(ctx, opts.ABI)
	if err != nil {
		return err
	}
	pr := newProgress(f, false) // a terminal sees the time go by
	pr.set("judging the cases with ggml-et's supports_op")
	pr.tick(500 * time.Millisecond)
	verdicts, bad, total, err := runner.Support(ctx, opts.sources(opts.Files, "", nil, nil, opts.Cases), m)
	pr.done()
	if err != nil {
		return err
	}
	report := &badCases{total: total, planOnly: true}
	for _, e := range bad {
		report.add(f, e)
	}
	doc := opsSupportDoc{Schema: "et.ops-support/v1", Rows: []opsSupportRow{}}
	for _, v := range verdicts {
		row := opsSupportRow{BackendName: opsSupportBackend, OpName: v.Op, OpParams: v.Params,
			TestMode: "support", Supported: "0", ErrorMessage: "no", BackendRegName: opsSupportBackend}
		if v.Supported {
			row.Supported, row.ErrorMessage = "1", "yes"
		}
		doc.Rows = append(doc.Rows, row)
		doc.why = append(doc.why, plan.JoinTexts(v.Reasons))
	}
	if len(doc.Rows) == 0 {
		return report.err()
	}
	if err := f.render(opsSupportDocument(doc)); err != nil {
		return err
	}
	return report.err()
}

func opsSupportDocument(d opsSupportDoc) document {
	t := table{Headers: []string{"op", "params", "supported", "why not"}}
	yes := 0
	for i, r := range d.Rows {
		sup := "no"
		if r.Supported == "1" {
			sup, yes = "yes", yes+1
		}
		why := d.why[i]
		if why == "" {
			why = "-"
		}
		t.Rows = append(t.Rows, []string{r.OpName, r.OpParams, sup, why})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d of %d cases supported by ggml-et", yes, len(d.Rows)))
	return document{Data: d, Tables: []table{t}}
}

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/runner"
)

//go:generate sh -c "cd ../.. && go run ./cmd/et ops list -o markdown > docs/ops.md"

// opsRegenerate is how docs/ops.md is regenerated (it is the markdown
// form of et ops list, kept in sync by TestOpsDocUpToDate).
const opsRegenerate = "go run ./cmd/et ops list -o markdown > docs/ops.md"

func newOpsCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ops",
		Short: "What ggml-et supports: the op matrix, and why a node is or is not supported",
		Example: `  $ et ops list
  $ et ops list -o markdown > docs/ops.md
  $ et ops explain 'PAD(type=f32,ne_a=[100,4,1,1])'`,
		RunE: groupRunE,
	}
	cmd.AddCommand(newOpsListCmd(f, nil), newOpsExplainCmd(f, nil), newOpsSupportCmd(f, nil))
	return cmd
}

// loadManifest returns the --abi manifest, or the embedded one.
func loadManifest(ctx context.Context, path string) (*abi.Manifest, error) {
	if path == "" {
		return abi.Default(), nil
	}
	data, err := infile.ReadFile(ctx, path, abi.MaxManifest)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &abi.ManifestError{File: path, Msg: "cannot read the ABI manifest", Err: err}
	}
	return abi.Parse(path, data)
}

// --- et ops list ---

type opsListOptions struct {
	ABI string
}

func newOpsListCmd(f *factory, runF func(context.Context, *opsListOptions) error) *cobra.Command {
	opts := &opsListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--abi <file>]",
		Short: "Every op ggml-et knows: kernels, types, uberkernel, constraints",
		Long: `List every ggml op of et's catalog as ggml-et handles it: the kernels it may
launch, the types it accepts, whether the uberkernel can batch it, and its
key supports_op constraints in one line — the ET column of llama.cpp's ops
support matrix, generated from the same tables the planner uses.

Then the unary and GLU sub-ops, and ggml-et's two fusions.

-o markdown gives the page docs/ops.md (regenerate it with
` + "`" + opsRegenerate + "`" + `). Scripts should use -o json.`,
		Example: `  $ et ops list
  $ et ops list -o markdown > docs/ops.md
  $ et ops list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return opsListRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.ABI, "abi", "", "ABI manifest YAML `file` for another ggml version (default: the built-in one)")
	return cmd
}

type opsListDoc struct {
	Schema     string          `json:"schema"`
	GGML       string          `json:"ggml"`
	GGMLCommit string          `json:"ggml_commit"`
	Ops        []opsListOp     `json:"ops"`
	SubOps     []opsListSubOp  `json:"sub_ops"`
	Fusions    []opsListFusion `json:"fusions"`
}

type opsListOp struct {
	Op          string          `json:"op"`
	GGMLOp      string          `json:"ggml_op"`
	View        bool            `json:"view"`
	Implemented bool            `json:"implemented"`
	Modelled    bool            `json:"modelled"`
	HostMath    bool            `json:"host_math"`
	Kernels     []opsListKernel `json:"kernels"`
	Uberkernel  string          `json:"uberkernel"`
	Types       string          `json:"types"`
	Constraints string          `json:"constraints"`
}

type opsListKernel struct {
	Name         string `json:"name"`
	Layout       string `json:"layout"`
	ParamsBytes  int    `json:"params_bytes"`
	Batchable    bool   `json:"uberkernel_batchable"`
	UberkernelID int    `json:"uberkernel_id"`
}

type opsListSubOp struct {
	Op        string `json:"op"`
	Name      string `json:"name"`
	Supported bool   `json:"supported"`
}

type opsListFusion struct {
	Fusion      string        `json:"fusion"`
	Kernel      opsListKernel `json:"kernel"`
	Constraints string        `json:"constraints"`
}

func newOpsListKernel(k plan.KernelInfo) opsListKernel {
	return opsListKernel{Name: k.Name, Layout: k.Layout, ParamsBytes: k.ParamsBytes, Batchable: k.Batchable, UberkernelID: int(k.UberkernelID)}
}

func opsListRun(ctx context.Context, f *factory, opts *opsListOptions) error {
	m, err := loadManifest(ctx, opts.ABI)
	if err != nil {
		return err
	}
	d := opsListDoc{Schema: "et.ops-list/v1", GGML: m.GGMLDescribe(), GGMLCommit: m.GGMLCommit(),
		Ops: []opsListOp{}, SubOps: []opsListSubOp{}, Fusions: []opsListFusion{}}
	for _, r := range plan.SupportMatrix(m) {
		o := opsListOp{Op: string(r.Op), GGMLOp: r.GGML, View: r.View, Implemented: r.Implemented, Modelled: r.Modelled, HostMath: r.HostMath,
			Kernels: []opsListKernel{}, Uberkernel: r.Uberkernel, Types: r.Types, Constraints: r.Constraints}
		for _, k := range r.Kernels {
			o.Kernels = append(o.Kernels, newOpsListKernel(k))
		}
		d.Ops = append(d.Ops, o)
	}
	for _, s := range plan.SubOpMatrix() {
		d.SubOps = append(d.SubOps, opsListSubOp{Op: string(s.Op), Name: s.Name, Supported: s.Supported})
	}
	for _, fr := range plan.FusionMatrix(m) {
		d.Fusions = append(d.Fusions, opsListFusion{Fusion: fr.Name, Kernel: newOpsListKernel(fr.Kernel), Constraints: fr.Constraints})
	}
	return f.render(opsListDocument(d))
}

// uberkernelCell says which of an op's kernels the uberkernel can batch.
func uberkernelCell(o opsListOp) string {
	if o.Uberkernel != "partly" {
		return o.Uberkernel
	}
	var yes, no []string
	for _, k := range o.Kernels {
		if k.Batchable {
			yes = append(yes, k.Name)
		} else {
			no = append(no, k.Name)
		}
	}
	if len(yes) <= len(no) {
		return "only " + strings.Join(yes, ", ")
	}
	return "not " + strings.Join(no, ", ")
}

func opsListDocument(d opsListDoc) document {
	t := table{Title: "ggml-et op support, " + d.GGML,
		Headers: []string{"op", "kernels", "types", "uberkernel", "constraints"}}
	var host, noMath, unmodelled []string
	for _, o := range d.Ops {
		var ks []string
		for _, k := range o.Kernels {
			ks = append(ks, k.Name)
		}
		kernels, types, uk, cons := strings.Join(ks, ", "), o.Types, uberkernelCell(o), o.Constraints
		switch {
		case !o.Implemented && o.HostMath:
			host = append(host, o.GGMLOp)
			kernels, types, uk, cons = "-", "-", "-", "not implemented by ggml-et: runs on the host"
		case !o.Implemented:
			noMath = append(noMath, o.GGMLOp)
			kernels, types, uk, cons = "-", "-", "-", "not implemented by ggml-et; et has no host math for it: skipped"
		case o.View:
			kernels = "-"
		}
		if o.Implemented && !o.Modelled {
			unmodelled = append(unmodelled, o.GGMLOp)
		}
		t.Rows = append(t.Rows, []string{o.GGMLOp, kernels, types, uk, cons})
	}
	t.Notes = append(t.Notes,
		"Generated by `et ops list -o markdown` from the tables et's planner uses; regenerate with `"+opsRegenerate+"`.",
		"Every op requires f32 unless the types column says otherwise; \"% 16\" means a multiple of 16; uberkernel says whether GGML_ET_UBERKERNEL can batch the op's kernels.",
		"`et ops explain` names every failed condition of a node and the nearest supported variant; `et ops support -o csv` gives ggml-et's verdict on every test-backend-ops case string, as `test-backend-ops support --output csv` writes it.")
	if len(unmodelled) > 0 {
		t.Notes = append(t.Notes, "Not modelled by et yet (run on the reference math): "+strings.Join(unmodelled, ", ")+".")
	}
	if len(host) > 0 {
		t.Notes = append(t.Notes, "Not implemented by ggml-et (run on the host): "+strings.Join(host, ", ")+".")
	}
	if len(noMath) > 0 {
		t.Notes = append(t.Notes, "Not implemented by ggml-et, no host math in et (a case reports them as skipped): "+strings.Join(noMath, ", ")+".")
	}

	st := table{Title: "Unary and GLU sub-ops", Headers: []string{"op", "supported", "not supported"}}
	for _, op := range []string{string(ops.OpUnary), string(ops.OpGLU)} {
		var yes, no []string
		for _, s := range d.SubOps {
			if s.Op != op {
				continue
			}
			if s.Supported {
				yes = append(yes, s.Name)
			} else {
				no = append(no, s.Name)
			}
		}
		st.Rows = append(st.Rows, []string{strings.ToUpper(op), joinOrDash(yes), joinOrDash(no)})
	}

	ft := table{Title: "Fusions", Headers: []string{"fusion", "kernel", "uberkernel", "constraints"}}
	for _, fu := range d.Fusions {
		uk := "no"
		if fu.Kernel.Batchable {
			uk = "yes"
		}
		ft.Rows = append(ft.Rows, []string{strings.ToUpper(fu.Fusion), fu.Kernel.Name, uk, fu.Constraints})
	}
	return document{Data: d, Tables: []table{t, st, ft}}
}

func joinOrDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

// --- et ops explain ---

type opsExplainOptions struct {
	Files  []string
	Op     string // op name or test-backend-ops case string
	Srcs   []string
	Params []string
	ABI    string
	// caseSources are --test-file, --op and -p/--params.
	caseSources
	// shardOptions is --shard I/N.
	shardOptions
}

func newOpsExplainCmd(f *factory, runF func(context.Context, *opsExplainOptions) error) *cobra.Command {
	opts := &opsExplainOptions{}
	cmd := &cobra.Command{
		Use:   "explain ['<OP(k=v,...)>' | <op> --src ... | -f <file> | --test-file <file>]",
		Short: "Whether ggml-et supports each node, why not, and what would fit",
		Long: `Check every node of a case against ggml-et's supports_op rules, as
et run-op would, without running anything. Each node gets its verdict, the
kernel it would launch and whether the uberkernel can batch it; each failed
condition is named ("ne0 % 16 != 0 (ne0 = 100)") with the nearest supported
variant ("pad ne0 to 112 (a multiple of 16)").

Name the work as for et run-op: a test-backend-ops case string, an op with
--src and --param, YAML case files with -f, or llama.cpp's exported graph
ops with --test-file; --op and -p/--params select cases as test-backend-ops'
-o and -p do.

Exit status: 0 whether or not the nodes are supported (the command only
informs), 2 for a bad case or flags (the good cases are still explained).`,
		Example: `  $ et ops explain 'RMS_NORM(type=f32,ne=[100,4,1,1])'
  $ et ops explain 'FLASH_ATTN_EXT(hsk=128,hsv=128,nh=8,kv=256,nb=1,type_KV=f32)'
  $ et ops explain mul_mat --src a=q4_K:256x64 --src b=f32:256x8
  $ et ops explain -f testcases/llama_layer_small.yaml -o json
  $ et ops explain --test-file testcases/test-files/llama_layer_small.txt --op MUL_MAT,ROPE
  $ et ops explain -f testcases/ --shard 1/4 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			op, err := opArgs(args, &opts.caseSources, opts.Files, opts.Srcs, opts.Params, "et ops explain")
			if err != nil {
				return err
			}
			opts.Op = op
			if err := opts.shardOptions.resolve(f.Getenv); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return opsExplainRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Files, "file", "f", nil, "YAML case `file` or directory (repeatable)")
	fl.StringArrayVar(&opts.Srcs, "src", nil, "source `SPEC` of an op given by name: NAME=TYPE:NE0xNE1[xNE2xNE3][:INIT] (repeatable, in source order)")
	fl.StringArrayVar(&opts.Params, "param", nil, "op parameter `KEY=VALUE` (repeatable)")
	fl.StringVar(&opts.ABI, "abi", "", "ABI manifest YAML `file` for another ggml version (default: the built-in one)")
	addCaseSourceFlags(cmd, &opts.caseSources)
	addShardFlag(cmd, &opts.shardOptions)
	return cmd
}

type opsExplainDoc struct {
	Schema string           `json:"schema"`
	Nodes  []opsExplainNode `json:"nodes"`
	// Shard is the part of a sharded explanation (--shard); its cases'
	// counts are 0 (nothing ran).
	Shard *runner.ShardInfo `json:"shard,omitempty"`
}

type opsExplainNode struct {
	Case         string              `json:"case"`
	Node         string              `json:"node"`
	Op           string              `json:"op"`
	Action       string              `json:"action"`
	Supported    bool                `json:"supported"`
	Failures     []opsExplainFailure `json:"failures"`
	Kernel       string              `json:"kernel,omitempty"`
	Fusion       string              `json:"fusion,omitempty"`
	FusedWith    string              `json:"fused_with,omitempty"`
	FusionMissed []string            `json:"fusion_missed,omitempty"`
	ParamsBytes  int                 `json:"params_bytes,omitempty"`
	Batchable    bool                `json:"uberkernel_batchable"`
	UberkernelID int                 `json:"uberkernel_id,omitempty"`
	Note         string              `json:"note,omitempty"`
	// ShireMask is the compute shire mask of a launch; ShireMaskNote says
	// why the mask asked for was refused (a kernel that needs all shires).
	ShireMask     uint32 `json:"shire_mask,omitempty"`
	ShireMaskNote string `json:"shire_mask_note,omitempty"`
	// InPlace: the node writes into its first source (dst.data == src0.data).
	InPlace bool `json:"in_place,omitempty"`
}

// opsExplainFailure is a failed condition: the sentence, its typed form
// (code, subject, have, want; see plan.Reason) and the suggested fix.
type opsExplainFailure struct {
	Condition  string          `json:"condition"`
	Code       plan.ReasonCode `json:"code"`
	Subject    string          `json:"subject,omitempty"`
	Have       string          `json:"have,omitempty"`
	Want       string          `json:"want,omitempty"`
	Suggestion string          `json:"suggestion"`
}

func opsExplainRun(ctx context.Context, f *factory, opts *opsExplainOptions) error {
	m, err := loadManifest(ctx, opts.ABI)
	if err != nil {
		return err
	}
	prep, err := runner.Prepare(ctx, runner.PrepareOptions{Sources: opts.sources(opts.Files, opts.Op, opts.Srcs, opts.Params, nil),
		Plan: runner.PlanOptions{Manifest: m}, Shard: opts.shard, Logf: f.logf})
	if err != nil {
		return err
	}
	// As in run-op: each bad case on stderr, the good ones explained,
	// then exit 2.
	bad := &badCases{total: prep.Total, planOnly: true}
	for _, e := range prep.Bad {
		bad.add(f, e)
	}
	if len(prep.Planned) == 0 && prep.Shard == nil {
		return bad.err()
	}
	d := explainPlans(prep.Planned)
	d.Shard = prep.ShardReport(nil, bad.lines())
	if err := f.render(opsExplainDocument(d)); err != nil {
		return err
	}
	return bad.err()
}

// explainPlans is the per-node explanation of planned cases, shared by
// et ops explain and et run-op --explain.
func explainPlans(planned []*runner.Planned) opsExplainDoc {
	d := opsExplainDoc{Schema: "et.ops-explain/v1", Nodes: []opsExplainNode{}}
	for _, rc := range planned {
		p := rc.Plan
		for i, r := range p.Explain() {
			n := opsExplainNode{Case: rc.Case.Name, Node: r.Node, Op: r.Op, Action: r.Kind.String(),
				Supported: r.Supported || r.Kind == plan.StepView, Failures: []opsExplainFailure{},
				Fusion: r.Fusion, FusedWith: r.FusedWith, FusionMissed: r.FusionMissed, Note: r.Note, InPlace: r.InPlace}
			if r.Step >= 0 && p.Steps[r.Step].Nodes[0] != i {
				n.Action = "fused"
			}
			if r.Kind == plan.StepLaunch {
				n.Kernel, n.ParamsBytes, n.Batchable, n.UberkernelID = r.Kernel, r.ParamsBytes, r.Batchable, int(r.UberkernelID)
				n.ShireMask, n.ShireMaskNote = r.ShireMask, r.MaskNote
			}
			for _, s := range plan.Suggestions(ops.Op(r.Op), r.Reasons) {
				n.Failures = append(n.Failures, opsExplainFailure{Condition: s.Reason.Text, Code: s.Reason.Code,
					Subject: s.Reason.Subject, Have: s.Reason.Have, Want: s.Reason.Want, Suggestion: s.Fix})
			}
			d.Nodes = append(d.Nodes, n)
		}
	}
	return d
}

func opsExplainDocument(d opsExplainDoc) document {
	multi := false
	for _, n := range d.Nodes {
		multi = multi || n.Case != d.Nodes[0].Case
	}
	nodeName := func(n opsExplainNode) string {
		if multi {
			return n.Case + "/" + n.Node
		}
		return n.Node
	}
	t := table{Headers: []string{"node", "op", "verdict", "action", "kernel", "params", "uberkernel"}, Right: []int{5}}
	ft := table{Title: "Failed conditions", Headers: []string{"node", "condition", "suggestion"}}
	supported := 0
	for _, n := range d.Nodes {
		verdict := "supported"
		if !n.Supported {
			verdict = "unsupported"
		} else {
			supported++
		}
		kernel, params, uk := "-", "-", "-"
		if n.Kernel != "" {
			kernel = n.Kernel
			if n.Fusion != "" {
				kernel += " (" + n.Fusion + ")"
			}
			params = strconv.Itoa(n.ParamsBytes) + " B"
			uk = "no"
			if n.Batchable {
				uk = "yes (id " + strconv.Itoa(n.UberkernelID) + ")"
			}
		}
		t.Rows = append(t.Rows, []string{nodeName(n), n.Op, verdict, n.Action, kernel, params, uk})
		for _, fl := range n.Failures {
			sug := fl.Suggestion
			if sug == "" {
				sug = "-"
			}
			ft.Rows = append(ft.Rows, []string{nodeName(n), fl.Condition, sug})
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d/%d nodes supported by ggml-et; unsupported nodes run on the host (reference math).", supported, len(d.Nodes)))
	for _, n := range d.Nodes {
		for _, fm := range n.FusionMissed {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: fusion not applied: %s", nodeName(n), fm))
		}
		if n.Note != "" {
			t.Notes = append(t.Notes, nodeName(n)+": "+n.Note)
		}
		if n.ShireMaskNote != "" {
			t.Notes = append(t.Notes, nodeName(n)+": "+n.ShireMaskNote)
		}
		if n.InPlace {
			t.Notes = append(t.Notes, nodeName(n)+": in place: the result is written into the first source (dst.data == src0.data)")
		}
	}
	tables := []table{t}
	if len(ft.Rows) > 0 {
		tables = append(tables, ft)
	}
	return document{Data: d, Tables: tables}
}

// opsListCSV is et ops list's raw CSV form: the ops, their kernels (one
// row per op and kernel), the unary and GLU sub-ops and the fusions.
func opsListCSV(d opsListDoc) []csvTable {
	type kernel struct {
		Op string `json:"op"`
		opsListKernel
	}
	kernels := []kernel{}
	for _, o := range d.Ops {
		for _, k := range o.Kernels {
			kernels = append(kernels, kernel{Op: o.Op, opsListKernel: k})
		}
	}
	return []csvTable{{Name: "ops", Rows: d.Ops}, {Name: "kernels", Rows: kernels},
		{Name: "sub_ops", Rows: d.SubOps}, {Name: "fusions", Rows: d.Fusions}}
}

// opsExplainCSV is et ops explain's (and run-op --explain's) raw CSV
// form: one row per node, and one per failed condition of a node.
func opsExplainCSV(d opsExplainDoc) []csvTable {
	type failure struct {
		Case string `json:"case"`
		Node string `json:"node"`
		opsExplainFailure
	}
	failures := []failure{}
	for _, n := range d.Nodes {
		for _, fl := range n.Failures {
			failures = append(failures, failure{Case: n.Case, Node: n.Node, opsExplainFailure: fl})
		}
	}
	return []csvTable{{Name: "nodes", Rows: d.Nodes}, {Name: "failures", Rows: failures}}
}

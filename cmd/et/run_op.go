package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/plan"
	"github.com/ainekko/et/internal/outfile"
	"github.com/ainekko/et/internal/runner"
	"github.com/ainekko/et/internal/verdict"
)

type runOpOptions struct {
	Files      []string
	Op         string // op name or test-backend-ops case string
	Srcs       []string
	Params     []string
	Explain    bool
	Uberkernel bool
	// ShireMask is --shire-mask (0: the full mask ggml-et launches with).
	ShireMask   uint32
	ABI         string
	Seed        uint64
	SeedSet     bool
	SaveOutputs string
	SaveInputs  string
	Perf        bool
	PerfRuns    int
	PerfWarmup  int
	PerfTime    time.Duration
	JUnit       string
	Profile     string
	NMSE        float64

	// ForceShireMask is --force-shire-mask.
	ForceShireMask bool

	// Jobs is --jobs: the devices (emulators) the cases are spread over.
	Jobs int
	// Progress is --progress: a line per finished case on stderr even
	// when it is not a terminal.
	Progress bool
	// ExpectedFailures is --expected-failures: a file of known defects
	// (internal/ops/expect).
	ExpectedFailures string
	// caseSources are --test-file, --op and -p/--params.
	caseSources
	// shardOptions is --shard I/N.
	shardOptions
	// backendOptions are --backend, --device, --timeout and the sysemu/pcie
	// flags (--prefix, --run-dir, --kernels, --sysemu-opt).
	backendOptions

	// Baseline is --baseline (an earlier run's -o json), BaselineKernels
	// --baseline-kernels (the same cases run first with these kernels);
	// MaxRegression is --max-regression, in percent.
	Baseline        string
	BaselineKernels string
	MaxRegression   float64

	// OpenDevice opens one device (nil: registry.Open; tests wrap it).
	OpenDevice func(context.Context, registry.Spec) (*registry.Handle, error)
}

func newRunOpCmd(f *factory, runF func(context.Context, *runOpOptions) error) *cobra.Command {
	opts := &runOpOptions{}
	var mask string
	cmd := &cobra.Command{
		Use:   "run-op [<op> | '<OP(k=v,...)>' ...] [flags]",
		Short: "Run ggml ops through the ggml-et dispatch path and compare with reference math",
		Long: `Run one ggml op, or a YAML graph of ops, through exactly the path ggml-et
takes — support check, fusion, kernel choice, byte-exact params, optional
uberkernel — on a device, and compare every output with the reference math
(NMSE as test-backend-ops computes it).

Ways to name the work:
  -f FILE|DIR        YAML case files (a directory runs every *.yaml in it)
  <op> --src ... --param ...
                     one op from flags; --src NAME=TYPE:NE0xNE1[xNE2xNE3][:INIT]
  'OP(k=v,...)' ...  test-backend-ops case strings (several: one run, one boot)
  --cases FILE       a plain file of case strings, one per line, # comments
  --test-file FILE   llama.cpp's exported graph ops (test-export-graph-ops),
                     one case per line

--op OP[,OP] and -p/--params REGEX select cases as test-backend-ops' -o and
-p do: by op name or full case string, and by a regular expression on the
displayed parameters.

Unsupported nodes run on the reference math, like ggml's CPU fallback, and
are reported as FALLBACK with the failed conditions (see --explain).

With --expected-failures FILE, listed outputs that fail are XFAIL (they do
not fail the run) and listed outputs that pass are XPASS (they do).

Exit status: 0 all outputs pass, 1 any mismatch or kernel fault, 2 bad case
or flags (the good cases of -f DIR still run), 3 backend unavailable,
4 timeout, 5 I/O or internal error.`,
		Example: `  $ et run-op -f testcases/
  $ et run-op -f testcases/llama_layer_small.yaml --explain
  $ et run-op rms_norm --src x=f32:4096x7 --param eps=1e-5
  $ et run-op 'MUL_MAT(type_a=q8_0,type_b=f32,m=4096,n=1,k=4096)' --perf
  $ et run-op 'ADD(type=f32,ne=[16,5,4,3])' 'MUL(type=f32,ne=[16,5,4,3])'
  $ et run-op --cases testcases/case-strings/llama_ops.txt --backend sysemu
  $ et run-op -f testcases/ -o json > results.json
  $ et run-op -f testcases/ -o html > results.html
  $ et run-op -f testcases/ --junit results.xml --save-outputs out/
  $ et run-op 'SOFT_MAX(type=f32,ne=[32,4,2,1],mask=1)' --save-inputs keep/ && et run-op -f keep/case.yaml
  $ et run-op -f testcases/norm.yaml --profile prof/ && et profile report prof/et_runtime_trace.json
  $ et run-op -f testcases/norm.yaml --backend sysemu --perf --perf-runs 1 --perf-warmup 0 --baseline old.json --max-regression 0
  $ et run-op -f testcases/norm.yaml --backend sysemu --perf --baseline-kernels old-kernels/ --kernels new-kernels/
  $ et run-op -f testcases/norm.yaml --backend sysemu --kernels ~/ggml-et/kernels --timeout 10m
  $ et run-op -f testcases/ --backend sysemu --jobs 2 --expected-failures testcases/expected-failures/sysemu.yaml
  $ et run-op -f testcases/unary.yaml --backend sysemu --shire-mask 0x1
  $ et run-op --test-file testcases/test-files/llama_layer_small.txt --backend sysemu
  $ et run-op --test-file ops.txt --op MUL_MAT,FLASH_ATTN_EXT -p 'type=f16'
  $ et run-op -f testcases/ --backend sysemu --device 0,1
  $ et run-op -f testcases/ --shard 2/4 -o json > shard-2.json
  $ et run-op merge shard-*.json --junit results.xml -o markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			op, err := opArgs(args, &opts.caseSources, opts.Files, opts.Srcs, opts.Params, "et run-op")
			if err != nil {
				return err
			}
			opts.Op = op
			if err := opts.validate(); err != nil {
				return err
			}
			if mask != "" {
				v, err := strconv.ParseUint(mask, 0, 32)
				if err != nil {
					return usageErrorf("--shire-mask %q: want a 32-bit compute shire mask such as 0x1 or 0xFFFFFFFF", mask)
				}
				if err := plan.CheckShireMask(uint32(v)); err != nil {
					return usageErrorf("--shire-mask: %v", err)
				}
				opts.ShireMask = uint32(v)
			}
			if opts.ForceShireMask && opts.ShireMask == 0 {
				return usageErrorf("--force-shire-mask needs --shire-mask")
			}
			if opts.Jobs < 1 {
				return usageErrorf("--jobs must be >= 1")
			}
			if opts.Jobs > 1 && opts.Backend == "pcie" {
				return usageErrorf("--jobs %d with --backend pcie: a card runs one job at a time", opts.Jobs)
			}
			if err := opts.checkDeviceList(true, opts.Jobs, opts.Profile); err != nil {
				return err
			}
			if opts.Jobs > 1 && opts.Profile != "" {
				return usageErrorf("--profile records one device: use it with --jobs 1")
			}
			if err := opts.shardOptions.resolve(f.Getenv); err != nil {
				return err
			}
			if err := opts.checkBaseline(); err != nil {
				return err
			}
			if opts.PerfRuns < 1 || opts.PerfWarmup < 0 || opts.PerfTime < 0 {
				return usageErrorf("--perf-runs must be >= 1, --perf-warmup and --perf-time >= 0")
			}
			if opts.PerfRuns > runner.MaxPerfRuns || opts.PerfWarmup > runner.MaxPerfRuns {
				return usageErrorf("--perf-runs and --perf-warmup must be at most %d (the runs of one launch)", runner.MaxPerfRuns)
			}
			opts.SeedSet = cmd.Flags().Changed("seed")
			if cmd.Flags().Changed("nmse") {
				if err := checkNMSELimit(opts.NMSE); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runOpRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Files, "file", "f", nil, "YAML case `file` or directory (repeatable)")
	fl.StringArrayVar(&opts.Srcs, "src", nil, "source `SPEC` of an op given by name: NAME=TYPE:NE0xNE1[xNE2xNE3][:INIT] (repeatable, in source order)")
	fl.StringArrayVar(&opts.Params, "param", nil, "op parameter `KEY=VALUE` (repeatable)")
	fl.BoolVar(&opts.Explain, "explain", false, "show the plan (support verdicts, fusion, kernel, params size) without running")
	fl.BoolVar(&opts.Uberkernel, "uberkernel", false, "batch launches into uberkernel segments (like GGML_ET_UBERKERNEL=1)")
	fl.StringVar(&mask, "shire-mask", "", "compute shires to launch on, contiguous (default 0xFFFFFFFF, as ggml-et; kernels that need all 32 keep them: see --explain)")
	fl.BoolVar(&opts.ForceShireMask, "force-shire-mask", false, "launch every kernel on --shire-mask, also those et knows need all 32 shires (to check a kernel build that honours partial masks; the stock ones then leave output unwritten or hang)")
	fl.StringVar(&opts.ABI, "abi", "", "ABI manifest YAML `file` for another ggml version (default: the built-in one)")
	fl.Var(seedFlag{&opts.Seed}, "seed", "override the cases' seed for generated inputs (as a case's seed:)")
	fl.StringVar(&opts.SaveInputs, "save-inputs", "", "write every case's inputs into `dir` as it runs: each leaf as .npy and case.yaml, a case file that replays exactly that run (a sub-directory per case when there are several)")
	fl.StringVar(&opts.SaveOutputs, "save-outputs", "", "write every output as float32 .npy into `dir` (<output>.npy from the device, <output>.ref.npy the reference)")
	fl.BoolVar(&opts.Perf, "perf", false, "time each launch: warm-up, then repeated runs (median/min/max, GFLOP/s, GB/s)")
	fl.IntVar(&opts.PerfRuns, "perf-runs", 10, "timed runs per launch with --perf (at most 100000)")
	fl.IntVar(&opts.PerfWarmup, "perf-warmup", 2, "warm-up runs per launch with --perf, not counted, at most 100000 (a launch whose last one takes under 10µs is then timed in batches of launches: JSON batch)")
	fl.DurationVar(&opts.PerfTime, "perf-time", 100*time.Millisecond, "with --perf, keep timing a launch after --perf-runs until the timed runs add up to this (at most 100000 runs; 0: exactly --perf-runs)")
	addBaselineFlags(cmd, opts)
	fl.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `file`")
	fl.StringVar(&opts.Profile, "profile", "", "write a runtime trace (et_runtime_trace.json, kernel_id.json) of the run into `dir`")
	fl.IntVarP(&opts.Jobs, "jobs", "j", 1, "run the cases on `N` devices in parallel (sysemu: N emulators, each with its own run directory); results stay in input order")
	fl.BoolVar(&opts.Progress, "progress", false, "a line per finished case on stderr, also when it is not a terminal (CI logs); a terminal always shows the case running")
	fl.Float64Var(&opts.NMSE, "nmse", 0, "NMSE limit for every output (default: per op, as test-backend-ops)")
	fl.StringVar(&opts.ExpectedFailures, "expected-failures", "", "YAML `file` of known defects: listed outputs that fail are XFAIL (exit 0), listed outputs that pass are XPASS (exit 1)")
	addCaseSourceFlags(cmd, &opts.caseSources)
	addShardFlag(cmd, &opts.shardOptions)
	addBackendFlags(cmd, &opts.backendOptions, true)
	cmd.AddCommand(newRunOpMergeCmd(f, nil))
	return cmd
}

func runOpRun(ctx context.Context, f *factory, opts *runOpOptions) error {
	m, err := loadManifest(ctx, opts.ABI)
	if err != nil {
		return err
	}
	if !opts.Explain {
		if err := checkOutputPaths(opts); err != nil {
			return err
		}
	}
	po := runner.PlanOptions{Manifest: m, Uberkernel: opts.Uberkernel, ShireMask: opts.ShireMask, ForceShireMask: opts.ForceShireMask}
	var seed *uint64
	if opts.SeedSet {
		seed = &opts.Seed
	}
	prep := runner.PrepareOptions{Sources: opts.sources(opts.Files, opts.Op, opts.Srcs, opts.Params, nil),
		Plan: po, Seed: seed, Shard: opts.shard, Logf: f.logf}
	if !opts.Explain {
		prep.ExpectedFailures = opts.ExpectedFailures
	}
	p, err := runner.Prepare(ctx, prep)
	if err != nil {
		return err
	}
	ctx = outfile.WithInputs(ctx, runOpInputs(opts, p)...)
	if opts.JUnit != "" && !opts.Explain {
		if err := outfile.CheckNotInput(ctx, opts.JUnit); err != nil {
			return err
		}
	}
	bad := &badCases{total: p.Total}
	for _, e := range p.Bad {
		bad.add(f, e)
	}
	if len(p.Planned) == 0 && len(bad.errs) > 0 && p.Shard == nil {
		return bad.err()
	}
	if opts.Explain {
		d := explainPlans(p.Planned)
		d.Shard = p.ShardReport(nil, bad.lines())
		if err := f.render(opsExplainDocument(d)); err != nil {
			return err
		}
		return bad.err()
	}
	if len(p.Planned) == 0 && p.Shard != nil {
		// An empty shard: a valid report, and nothing to boot.
		doc := runner.EmptyReport(opts.Backend)
		doc.Shard = p.ShardReport(nil, bad.lines())
		return renderRunOp(ctx, f, opts, doc, bad)
	}
	eo := runner.ExecuteOptions{Target: opts.target(f, m), Jobs: opts.Jobs, Profile: opts.Profile,
		Options: runner.Options{Plan: po, Backend: opts.Backend, NMSE: opts.NMSE,
			SaveOutputs: opts.SaveOutputs, SaveInputs: opts.SaveInputs, Logf: f.logf, MaxHostMemory: opts.MaxHostMemory},
		Bad: func(err error) { bad.add(f, err) }, Warnf: f.warnf}
	if opts.Perf {
		eo.Perf = runner.PerfOptions{Warmup: opts.PerfWarmup, Runs: opts.PerfRuns, MinTime: opts.PerfTime}
	}
	pr := newProgress(f, opts.Progress)
	if pr != nil {
		eo.Progress = pr.event
		if pr.tty && !f.Global.Verbose {
			eo.Target.Spec.Host.BootLine = pr.bootLine
		}
		n := fmt.Sprintf("%d cases", len(p.Planned))
		if len(p.Planned) == 1 {
			n = "1 case"
		}
		pr.set(fmt.Sprintf("opening the %s device (%s)", opts.Backend, n))
		pr.tick(500 * time.Millisecond)
	}
	base, err := opts.baselineReport(ctx, f, p, eo)
	if err != nil {
		pr.done()
		return err
	}
	out, err := runner.Execute(ctx, p, eo)
	pr.done()
	if err != nil {
		return err
	}
	if !out.Ran {
		return bad.err() // no case could run: nothing to show
	}
	doc := out.Report
	if base != nil {
		doc.Baseline = runner.CompareBaseline(base, &doc, opts.baselineFrom(), opts.MaxRegression)
	}
	doc.Shard = p.ShardReport(out.Spans, bad.lines())
	lateErr := out.LateErr
	if opts.JUnit != "" && lateErr == nil {
		var b []byte
		if b, lateErr = runner.JUnit(&doc); lateErr == nil {
			lateErr = outfile.WriteFileContext(ctx, opts.JUnit, b)
		}
	}
	if err := f.render(runOpDocument(doc, f.styles())); err != nil {
		return err
	}
	if lateErr != nil {
		return lateErr
	}
	if err := bad.err(); err != nil {
		return err
	}
	if doc.Failed() {
		return errSilent
	}
	return nil
}

// target is where run-op's jobs run: the backend flags, with m the ABI
// manifest of the reference device.
func (opts *runOpOptions) target(f *factory, m *abi.Manifest) runner.Target {
	b := &opts.backendOptions
	return runner.Target{Spec: b.spec(f, m), Devices: b.Devices, AllDevices: b.AllDevices, Kernels: b.Kernels,
		ListDevices: b.listDevices, Open: opts.OpenDevice}
}

// runOpInputs are the files a run reads, which no output may replace:
// case files (the *.yaml of a -f directory), test files, the ABI
// manifest, the expected failures and every .npy leaf of the cases.
func runOpInputs(opts *runOpOptions, p *runner.Prepared) []string {
	in := []string{opts.ABI, opts.ExpectedFailures}
	in = append(in, opts.TestFiles...)
	for _, f := range opts.Files {
		if yamls, err := filepath.Glob(filepath.Join(globEscape(f), "*.yaml")); err == nil && len(yamls) > 0 {
			in = append(in, yamls...)
		}
		in = append(in, f)
	}
	for _, pc := range p.Planned {
		for _, ts := range pc.Case.Tensors {
			if npy := ts.Init.Npy; npy != "" {
				if !filepath.IsAbs(npy) {
					npy = filepath.Join(pc.Case.Dir, npy)
				}
				in = append(in, npy)
			}
		}
	}
	return in
}

// globEscape quotes the pattern characters of a path for filepath.Glob.
func globEscape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)
	return r.Replace(p)
}

// checkOutputPaths fails early, before anything runs, when --save-outputs
// or --junit cannot be written.
func checkOutputPaths(opts *runOpOptions) error {
	if opts.SaveInputs != "" {
		if err := os.MkdirAll(opts.SaveInputs, 0o755); err != nil {
			return inputErrorf("--save-inputs %s: %v", opts.SaveInputs, infile.ErrText(err))
		}
	}
	if opts.SaveOutputs != "" {
		if err := os.MkdirAll(opts.SaveOutputs, 0o755); err != nil {
			return inputErrorf("--save-outputs %s: %v", opts.SaveOutputs, infile.ErrText(err))
		}
	}
	if opts.JUnit != "" {
		dir := filepath.Dir(opts.JUnit)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return inputErrorf("--junit %s: directory %s does not exist", opts.JUnit, dir)
		}
		if st, err := os.Stat(opts.JUnit); err == nil && st.IsDir() {
			return inputErrorf("--junit %s: is a directory", opts.JUnit)
		}
	}
	return nil
}

func runOpDocument(d runner.Report, st styles) document {
	t := table{Headers: []string{"case", "node", "op", "kernel", "status", "nmse", "max_abs_err", "drift", "time"}, Right: []int{5, 6, 7, 8},
		Optional: []string{"drift", "max_abs_err", "time"}}
	c := d.Count()
	d.Counts = &c
	label, fileNote := caseLabeler(d.Results)
	for _, r := range d.Results {
		kernel := r.Kernel
		if r.Fusion != "" {
			kernel += " (" + r.Fusion + ")"
		}
		if kernel == "" {
			kernel = "-"
		}
		t.Rows = append(t.Rows, []string{label(r.Case), r.Node, r.Op, kernel, st.Status(string(r.Status)),
			nmseCell(r), maxAbsCell(r), driftCell(r), runTime(r.TimeNS)})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s on %s (%s)", countsSummary(c), d.Device, d.Backend))
	if d.Numerics == "reference" {
		t.Notes = append(t.Notes, fmt.Sprintf("reference device: the outputs are et's reference math behind the ABI; checked are the dispatch (support, fusion, kernel) and the params of %d kernel run(s), decoded field by field equal to the plan, not device numerics", d.ABIChecked))
	}
	t.Notes = append(t.Notes, "nmse: each node on the device's own inputs of it; drift: the output against the reference chained from the inputs")
	if fileNote != "" {
		t.Notes = append(t.Notes, fileNote)
	}
	for _, r := range d.Results {
		if r.Detail != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s/%s: %s", label(r.Case), r.Node, r.Detail))
		}
		if r.Status == verdict.XFail {
			t.Notes = append(t.Notes, fmt.Sprintf("%s/%s: expected failure (%s)", label(r.Case), r.Node, r.Expected))
		}
		if r.Status == verdict.Fallback && len(r.Reasons) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s/%s ran on the host: %s", label(r.Case), r.Node, plan.JoinTexts(r.Reasons)))
		}
	}
	doc := document{Data: d, Tables: []table{t}}
	if len(d.Faults) > 0 {
		doc.Tables = append(doc.Tables, runOpFaultTable(d.Faults))
	}
	if len(d.ABIMismatches) > 0 {
		at := table{Title: "ABI mismatches", Headers: []string{"case", "step", "field", "planned", "decoded"}}
		for _, m := range d.ABIMismatches {
			for _, fd := range m.Fields {
				at.Rows = append(at.Rows, []string{m.Case, m.Step, fd.Field, fd.Planned, fd.Decoded})
			}
		}
		at.Notes = append(at.Notes, fmt.Sprintf("%d launch(es) whose params the device decoded differently from the plan: the plan's ABI manifest and the device's disagree", len(d.ABIMismatches)))
		doc.Tables = append(doc.Tables, at)
	}
	doc.Tables = append(doc.Tables, runOpPerfTables(d)...)
	return doc
}

// runTime is a measured time for run-op tables: "-" when not measured.
func runTime(ns int64) string {
	if ns <= 0 {
		return "-"
	}
	return fmtNS(ns)
}

// Package runner owns a run of cases, from the flags that name them to a
// typed report:
//
//	Sources (-f files, case strings,   Prepare: LoadCases (the files read
//	flags, --test-file, --op/-p)        through infile; a FIFO among a
//	     │                              directory's *.yaml refused), the
//	     │                              --shard's cases (Shard.Select)
//	     ▼
//	PlanAll / PlanCase ──────────────── BuildGraph (zero leaves) → plan.Build,
//	     │                               once per case
//	     │   *Planned{Case, Graph, Plan}: immutable; et ops explain and
//	     │   et ops support (Support) stop here
//	     ▼
//	Execute ─────────────────────────── --profile (the runtime's profiler, or
//	     │                               et's recording), --timeout, then
//	     │                               OpenDevices: kernel ELFs read, one
//	     │                               device per job (registry.Open)
//	     ▼
//	Run(ctx, devices, planned, opts) ── one job per device, each taking the
//	     │                               next case: its plan's leaves bound to
//	     │                               its data (CheckMemory, inputs made)
//	     │                               → SaveInputs → exec.Run of that plan
//	     │                               → per-output Result (verdict.Judge),
//	     │                               Timing, Fault, ABIMismatch, SKIP (no
//	     │                               host math); the leaves unbound
//	     ▼
//	Report ──────────────────────────── expected failures applied, .npy saved
//	     │                               (SaveOutputs), JUnit, shard spans;
//	     ▼                               Merge joins shard reports
//	cmd/et renders it (table, JSON, YAML, CSV, Markdown, HTML) and maps
//	errors to exit codes.
//
// Progress, warnings and the bad cases go to functions cmd/et supplies
// (Logf, Warnf, Bad, registry.Host); a run gives its plans back as
// planned, so a plan runs again with the same results. docs/architecture.md has the map
// of the whole project.
package runner

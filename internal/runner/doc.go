// Package runner owns a run of cases, from cases to a typed report:
//
//	[]*graph.Case                       (cmd/et: -f files, case strings, flags,
//	     │                               --test-file, --op/-p filters, --shard)
//	     ▼
//	PlanAll / PlanCase ──────────────── BuildGraph (zero leaves, or the inputs
//	     │                               after CheckMemory) → plan.Build
//	     │   *Planned{Case, Graph, Plan}: immutable; et ops explain and
//	     │   et ops support stop here
//	     ▼
//	Run(ctx, devices, planned, opts) ── one job per device (registry.Open in
//	     │                               cmd/et), each taking the next case:
//	     │                               PlanCase with data → SaveInputs →
//	     │                               exec.Run → per-output Result, Timing,
//	     │                               Fault, ABIMismatch, SKIP (no host math)
//	     ▼
//	Report ──────────────────────────── expected failures applied, .npy saved
//	     │                               (SaveOutputs), JUnit, shard spans;
//	     ▼                               Merge joins shard reports
//	cmd/et renders it (table, JSON, YAML, CSV, Markdown, HTML) and maps
//	errors to exit codes.
//
// Devices come from internal/driver/registry; a run never writes its
// plans, so a plan runs again with the same results. docs/architecture.md
// has the map of the whole project.
package runner

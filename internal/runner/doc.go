// Package runner owns a run of cases: cases → plans → devices → results.
//
// This is the planning entry point for every command that plans cases
// (et run-op, et ops explain): PlanCase builds a case into a planner
// graph (with zero leaves when only planning, or with its generated or
// read inputs after the host-memory admission check) and plans it.
package runner

package driver

import "context"

// ProfileTraceFile is the trace a Profiler writes into its directory: the
// name ggml-et gives the runtime profiler's output with GGML_ET_PROFILE
// (reference et-runtime-trace.md §2.4).
const ProfileTraceFile = "et_runtime_trace.json"

// PartialTraceSuffix is added to the runtime profiler's trace file while
// it is being written (ProfileTraceFile + PartialTraceSuffix in the
// profile directory). StopProfile renames it; a run that dies leaves it
// truncated under that name.
const PartialTraceSuffix = ".partial"

// Profiler is implemented by devices whose runtime records its own trace:
// the ET runtime's profiler (rt::IRuntime::getProfiler), reached through
// the etrt backends. The reference device has none; et records a trace of
// it from outside instead.
type Profiler interface {
	// StartProfile starts the runtime profiler with JSON output into
	// dir/ProfileTraceFile (dir exists). Calls made after it are traced.
	StartProfile(ctx context.Context, dir string) error
	// StopProfile waits for the launched work, so that its device times
	// are in the trace, then stops the profiler and completes the file.
	// Without a running profiler it does nothing.
	StopProfile(ctx context.Context) error
}

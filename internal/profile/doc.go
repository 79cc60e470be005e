// Package profile owns ET runtime profiler traces (et_runtime_trace.json):
// a streaming, uint64-exact, truncation-tolerant decoder (Decode), a
// structural validator (Validator), the joins that turn events into kernel
// launches and copies (Joiner), the aggregate report (Report), the Chrome
// Trace export, trace diffs, a trace writer (Writer), the event sequences of
// the runtime's API calls (Builder, shared by the reference device's trace
// recorder in internal/ops/exec) and a synthetic trace generator (Generate)
// for tests and benchmarks.
//
// The format is specified in reference/et-runtime-trace.md.
//
// profile imports only the standard library and internal/kernelmap. It
// never prints and never exits: problems in the input are returned as
// typed errors (with an InputError method) or as Warnings.
package profile

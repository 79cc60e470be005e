// Package exec runs a plan on a driver.Device the way ggml-et does:
// allocate one device buffer per tensor memory, upload the inputs, load
// the kernels, launch each step (or uberkernel segment), run unsupported
// nodes on the host like ggml's CPU fallback, synchronize, download the
// outputs and compare them with the reference math evaluated directly on
// the host. It can also time repeated launches (perf mode), and record a
// run as the ET runtime's profiler would (TraceRecorder: et_runtime_trace.json
// and kernel_id.json, with the device's simulated cycles).
//
// exec imports internal/ops, ops/abi, ops/plan, driver, profile and
// kernelmap only. It never prints and never exits.
package exec

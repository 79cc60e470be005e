// Package plan does what ggml-et's graph_compute does, as data: it holds a
// graph of ops (Graph), checks each node against ggml-et's supports_op
// rules with a named reason per failed condition, applies ggml-et's
// fusions (RMS_NORM+MUL, Q8_0 MUL_MAT+ADD), chooses the kernel, describes
// the byte-exact params struct of each launch and batches launches into
// uberkernel segments.
//
// plan imports only internal/ops, internal/ops/abi and internal/kernelmap.
// It never prints and never exits.
package plan

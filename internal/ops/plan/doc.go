// Package plan does what ggml-et's graph_compute does, as data: it holds a
// graph of ops (Graph), checks each node against ggml-et's supports_op
// rules with a named reason per failed condition (Supports), applies
// ggml-et's fusions (RMS_NORM+MUL, Q8_0 MUL_MAT+ADD), chooses the kernel,
// describes the byte-exact params struct of each launch (Build, Encode),
// batches launches into uberkernel segments (Segments) and explains all
// of it per node (Explain, the rows of `et run-op --explain`).
//
// The rules are a table: one opRule row per op (rules.go, rules_<family>.go)
// with its supports_op check, kernel selector, tensor fields and scalar
// binder, and one row per fusion (fusion.go). Adding an op is a row.
//
// plan imports only internal/ops, internal/ops/abi and internal/kernelmap.
// It never prints and never exits.
package plan

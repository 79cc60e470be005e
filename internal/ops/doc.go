// Package ops holds the data model of ggml ops as et sees them: dtypes and
// their row codecs (the block formats themselves are package codec),
// Tensor with ggml ne/nb and view
// semantics, the op catalog (sources, params, shape and type inference,
// cost) and the comparison metrics (NMSE, max abs error). Every package
// that plans, encodes, loads or judges ops imports it; the reference math
// that computes them is package refmath, which imports ops.
//
// ops imports only the standard library, ops/half and ops/codec. It never prints
// and never exits.
package ops

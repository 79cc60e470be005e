// Package ops holds the data model of ggml ops as et sees them: dtypes and
// their bit-exact quantization codecs, Tensor with ggml ne/nb and view
// semantics, the reference math of every op with ggml semantics, and the
// comparison metrics (NMSE, max abs error).
//
// ops imports only the standard library. It never prints and never exits.
package ops

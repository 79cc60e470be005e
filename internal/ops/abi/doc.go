// Package abi owns the binary interface between et and the ggml ET kernels:
// the ABI manifest (ggml enum values, uberkernel kernel ids, struct sizes,
// kernel → params-struct map) with an embedded default for the ggml version
// the kernels are built from, the 336-byte device ggml_tensor codec, the
// byte layouts of every kernel params struct (generic encode and decode
// driven by field tables), and the uberkernel instruction records and
// params blob.
//
// abi imports only internal/ops, the standard library and go.yaml.in/yaml/v3.
// It never prints and never exits, and does no work at package init: the
// embedded manifest is parsed on the first call to Default.
package abi

// Package refmath is the reference math of every op in the catalog, with
// ggml's CPU semantics, bit for bit where ggml's CPU backend is
// deterministic: Run and Compute check an op's tensors against the
// catalog (package ops) and run its math; Ref and Bind give the function
// itself (Bind: the form bound to its tensors, for the reference device's
// replays).
//
// The files follow the op families (binary.go, norm.go, mulmat*.go,
// flashattn*.go, ...). Their CPU kernels are chosen by build and by the
// CPU's features: *_simd_amd64.go with GOEXPERIMENT=simd (archsimd),
// *_amd64.s assembly in every amd64 build, portable Go elsewhere; every
// kernel has a portable twin its tests compare it with.
//
// refmath imports ops, ops/parallel and its packages cpu, mulmat and attn. It never prints and never exits.
package refmath

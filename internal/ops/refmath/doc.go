// Package refmath is the reference math of every op in the catalog, with
// ggml's CPU semantics, bit for bit where ggml's CPU backend is
// deterministic: Run and Compute check an op's tensors against the
// catalog (package ops) and run its math; Ref and Bind give the function
// itself (Bind: the form bound to its tensors, for the reference device's
// replays). Each runs with a Kernels (the CPU kernels it may use); the
// package's functions with this CPU's (Host).
//
// The files here follow the op families (binary.go, norm.go, rope.go,
// cpy.go, ...; reftable.go maps each op to its math). The larger families
// are packages of their own: mulmat (MUL_MAT, MUL_MAT_ID) and attn
// (SOFT_MAX, FLASH_ATTN_EXT); cpu holds the kernel set and the kernels
// every family shares, chosen by build (*_simd_amd64.go with
// GOEXPERIMENT=simd, *_amd64.s assembly in every amd64 build, portable Go
// elsewhere) and by the Kernels' fields.
//
// refmath imports ops, ops/parallel and its packages cpu, mulmat and
// attn. It never prints and never exits.
package refmath

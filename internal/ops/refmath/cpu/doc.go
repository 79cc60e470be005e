// Package cpu holds the CPU kernels the reference math's op families
// share and the kernel set that chooses them: Kernels (a field per family
// of kernels, Detect for this CPU), the row kernels (add, mul, norms'
// sums, rope, q8_0 dequantization, f32 -> f16), ggml's exp and silu
// kernels, soft_max's passes, the eight-row dot of MUL_MAT, the archsimd
// load helpers, the worker split (Parallel) and the work-area pools.
// Each kernel is chosen by build (*_simd_amd64.go with GOEXPERIMENT=simd,
// *_amd64.s in every amd64 build, portable Go elsewhere) and by the
// fields of the Kernels it runs with, and has a portable twin its tests
// compare it with.
//
// cpu imports ops, ops/codec and ops/parallel. It never prints
// and never exits.
package cpu

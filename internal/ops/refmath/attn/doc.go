// Package attn is the reference math of SOFT_MAX and FLASH_ATTN_EXT, with
// ggml's CPU semantics: the online softmax of flash attention with f16 K
// and V by AVX-512 or F16C assembly or archsimd kernels where the CPU has
// them (bit for bit against the scalar loop where the dots are exact),
// and soft_max's passes (scale, mask, ALiBi, sinks) through the row
// kernels of package cpu. Its methods run with the Kernels they are
// given.
//
// attn imports ops and refmath/cpu. It never
// prints and never exits.
package attn

// Package kernelmap owns ggml's kernel_id.json maps (kernel name → runtime
// KernelId; read tolerantly as id → name, because names repeat across
// devices, and written in ggml's exact byte format) and the catalog of
// kernel ELF names.
//
// kernelmap imports only the standard library. It never prints and never
// exits.
package kernelmap

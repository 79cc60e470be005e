// Gen writes the generated Go assembly of package mulmat: the register
// tiles of ggml's tinyBLAS order (sgemm: mulmat_sgemm_amd64.s), the
// AVX-512VL f32 and f16 register tiles (tile4: mulmat_tile4_amd64.s) and
// the AVX-512 VNNI kernels of the quantized MulMat (vnni:
// mulmat_vnni_amd64.s). Each file's go:generate line, beside the Go
// declarations of its functions, runs it from internal/ops/refmath/mulmat:
//
//	go run ./gen [-dir DIR] {sgemm|tile4|vnni}...
//
// It writes each named file into DIR (default: the current directory);
// the same program writes the same bytes. The functions' Go declarations
// (names, frame sizes, argument layout) live in the mulmat files that
// carry the go:generate lines; a change here must keep them.
//
// Gen imports only the standard library, and nothing imports it.
package main

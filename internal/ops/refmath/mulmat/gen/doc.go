// Package gen writes the generated Go assembly of package mulmat: the
// register tiles of ggml's tinyBLAS order (sgemm: mulmat_sgemm_amd64.s),
// the AVX-512VL f32 and f16 register tiles (tile4: mulmat_tile4_amd64.s)
// and the AVX-512 VNNI and the AVX2 kernels of the quantized MulMat
// (vnni: mulmat_vnni_amd64.s; qavx2: mulmat_qavx2_amd64.s). It is its tests: TestFilesUpToDate checks that
// each file is what its generator writes, and with -update writes it.
// Each file's go:generate line, beside the Go declarations of its
// functions, runs that from internal/ops/refmath/mulmat:
//
//	go test ./gen -run '^TestFilesUpToDate$/^vnni$' -update
//
// and `go generate ./internal/ops/refmath/mulmat` (GOEXPERIMENT=simd for
// tile4's line) runs them all. The same generator writes the same bytes.
// The functions' Go declarations (names, frame sizes, argument layout)
// live in the mulmat files that carry the go:generate lines; a change
// here must keep them.
//
// Gen imports only the standard library, and nothing but its tests use
// it; it prints nothing and never exits.
package gen

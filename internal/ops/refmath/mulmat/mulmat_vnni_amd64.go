package mulmat

//go:generate go test ./gen -run ^TestFilesUpToDate$/^vnni$ -update

import (
	"unsafe"
)

// The q4_0 eight-row kernel for one column in Go assembly
// (mulmat_vnni_amd64.s), used when the CPU has AVX-512 with VNNI and F16C
// (Kernels.VNNI). It computes what q4_0Rows8Fused512 does, with VPDPBUSD
// (u8·s8 products summed four at a time into int32, without saturation:
// exact) in place of VPMADDUBSW and VPMADDWD, and the f16 scales widened by
// VCVTPH2PS, exact for all halves but NaNs (a signalling NaN comes out
// quiet; the result is NaN either way). The float32 operations per lane
// are those of the scalar dotQ4_0, in the same order: bit-identical
// results, NaNs aside (both NaN).
// The VNNI kernels run in every amd64 build, GOEXPERIMENT=simd or not: in
// the plain build they are the quantized MulMat's only vector code, taking
// every group of eight rows (vnniAlone).

// reduceIdx is the permutation of the kernels' final reduction (reduce8
// in mulmat_tile512_simd_amd64.go).
var reduceIdx = [16]uint32{0, 4, 8, 12, 1, 5, 9, 13}

//go:noescape
func q4_0Rows8VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)

// q8_0Rows8VNNI is q8_0Rows8FusedVec by AVX-512 VNNI: VPDPBUSD multiplies
// unsigned by signed bytes, so the quants x go in as x+128 (their sign bit
// flipped) and 128·Σy (s, the activations' block sums) is subtracted from
// the exact int32 sum.
//
//go:noescape
func q8_0Rows8VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[8]float32, next unsafe.Pointer)

// q8_0Rows8x2VNNI and q4_0Rows8x2VNNI are q8_0Rows8VNNI and q4_0Rows8VNNI
// against two activation rows, the second's scales and sums at d+dd and
// s+dd and its quants at y+8·dd (a row has k quants of one byte and k/32
// scales of four), each weight block loaded once: out[0:8] for the first
// row, out[8:16] for the second.
//
// All four kernels prefetch, while they run, the eight rows after theirs
// in memory from next (rows8.next) or, where next is nil, their own rows
// 512 bytes ahead: one block of the next rows for each of their own (at
// next + 8·offset), so the weights stream as one sequential run, where
// eight streams of short rows (MUL_MAT_ID's experts: k = 2048, 2 KiB a
// row) ran at half the DRAM bandwidth.
//
//go:noescape
func q8_0Rows8x2VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)

// q8_0Rows8x4TVNNI is q8_0Rows8VNNI against four activation rows, their
// quants, scales and sums interleaved by block (actRows.q4, d4, s4: 128
// bytes, four scales and four sums a block): each block's 32 quants of the
// eight weight rows are transposed in registers so that lane r of the g-th
// vector holds row r's quants 4g..4g+3, and VPDPBUSD against a column's
// four quants broadcast sums the block for all eight rows in one lane
// each, with no horizontal reduction (the two-column kernels reduce 16
// vectors a block); the scales are gathered once for the four columns.
// The float32 operations per lane are those of the scalar dotQ8_0, in
// the same order: bit-identical results. out[8c:8c+8] is column c's.
//
//go:noescape
func q8_0Rows8x4TVNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, nb int, out *[32]float32, next unsafe.Pointer)

//go:noescape
func q4_0Rows8x2VNNI(p *[8]unsafe.Pointer, y, d, s unsafe.Pointer, dd uintptr, nb int, out *[16]float32, next unsafe.Pointer)
